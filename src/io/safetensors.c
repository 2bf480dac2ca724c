/* safetensors.c — checkpoints from C: cg_save_safetensors / cg_load_safetensors
 * write and read the safetensors format that cgrad.utils.safetensors and the
 * safetensors package use (an 8-byte little-endian header length, a JSON
 * header {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}},
 * then the raw little-endian data). The loader validates as the Python one
 * does, with the same words in its messages (tests/python/test_c_checkpoints.py
 * runs the Python loader's hostile cases here): the header length against the
 * limit and the file size before reading it, then every field of every entry,
 * before any data is read. The JSON is parsed by cJSON (Debian's libcjson-dev:
 * small, bounded nesting, length-limited parsing; docs/engine.md, "Checkpoints
 * from C"); cJSON keeps numbers as doubles, so an integer field must be integral
 * and below 2^53 (no real file has an offset beyond that). */
#include "../core/core_internal.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER 100000000ULL /* the safetensors library's bound on the header size */

static const struct {
    const char *code;
    cg_dtype dt;
} k_codes[] = {
    {"F64", CG_DTYPE_F64}, {"F32", CG_DTYPE_F32}, {"F16", CG_DTYPE_F16}, {"BF16", CG_DTYPE_BF16},
    {"I64", CG_DTYPE_I64}, {"I32", CG_DTYPE_I32}, {"I16", CG_DTYPE_I16}, {"I8", CG_DTYPE_I8},
    {"U8", CG_DTYPE_U8},   {"U16", CG_DTYPE_U16}, {"U32", CG_DTYPE_U32}, {"U64", CG_DTYPE_U64},
    {"BOOL", CG_DTYPE_BOOL},
};
/* codes of the format that cgrad has no tensor type for */
static const char *const k_unsupported[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"};

#define BAD(...) cg_set_error(CG_ERR_VALUE, "[load_safetensors] invalid checkpoint: " __VA_ARGS__)

static const char *code_of(cg_dtype dt) {
    for (size_t i = 0; i < sizeof k_codes / sizeof *k_codes; i++)
        if (k_codes[i].dt == dt) return k_codes[i].code;
    return NULL;
}

/* ------------------------------------------------------------------ save */

/* JSON string s (UTF-8) with quotes and escapes appended to buf */
static bool put_json_string(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t need = *len + 6 * strlen(s) + 3;
    if (need > *cap) {
        size_t nc = need * 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return false;
        *buf = nb;
        *cap = nc;
    }
    char *p = *buf + *len;
    *p++ = '"';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            *p++ = '\\';
            *p++ = (char)*c;
        } else if (*c < 0x20) {
            p += sprintf(p, "\\u%04x", *c);
        } else {
            *p++ = (char)*c;
        }
    }
    *p++ = '"';
    *len = (size_t)(p - *buf);
    return true;
}

static bool put_text(char **buf, size_t *len, size_t *cap, const char *fmt, long long a, long long b) {
    char tmp[96];
    int k = snprintf(tmp, sizeof tmp, fmt, a, b);
    if (*len + (size_t)k + 1 > *cap) {
        size_t nc = (*len + (size_t)k + 1) * 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return false;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, tmp, (size_t)k);
    *len += (size_t)k;
    return true;
}

typedef struct {
    const char *name;
    cg_tensor *t; /* contiguous, a new reference */
} save_item;

/* widest elements first, then by name, so every tensor stays aligned to its element size
 * (the order cgrad.utils.safetensors writes) */
static int item_order(const void *a, const void *b) {
    const save_item *x = a, *y = b;
    size_t sx = cg_dtype_size(cg_tensor_dtype(x->t)), sy = cg_dtype_size(cg_tensor_dtype(y->t));
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        c += k;
        n -= (size_t)k;
    }
    return true;
}

cg_status cg_save_safetensors(const char *path, int64_t n, const char *const *names, cg_tensor *const *tensors) {
    CG_CHECK_S(path && n >= 0 && (n == 0 || (names && tensors)), CG_ERR_VALUE,
               "[save_safetensors] path, names and tensors must be given (n >= 0)");
    for (int64_t i = 0; i < n; i++) {
        CG_CHECK_S(names[i] && tensors[i], CG_ERR_VALUE, "[save_safetensors] entry %lld has no name or no tensor",
                   (long long)i);
        CG_CHECK_S(strcmp(names[i], "__metadata__") != 0, CG_ERR_VALUE,
                   "[save_safetensors] '__metadata__' is reserved and cannot name a tensor");
        CG_CHECK_S(cg_device_eq(cg_tensor_device(tensors[i]), cg_cpu()), CG_ERR_DEVICE,
                   "[save_safetensors] tensor '%s' is on the %s device (it has no data here)", names[i],
                   cg_device_name(cg_tensor_device(tensors[i])));
        for (int64_t j = 0; j < i; j++)
            CG_CHECK_S(strcmp(names[i], names[j]) != 0, CG_ERR_VALUE, "[save_safetensors] duplicate name '%s'",
                       names[i]);
    }
    save_item *items = calloc((size_t)n + 1, sizeof *items);
    char *head = NULL;
    size_t len = 0, cap = 0;
    cg_status st = CG_OK;
    int fd = -1;
    char *tmp = NULL;
    if (!items) return cg_set_error(CG_ERR_OOM, "[save_safetensors] out of memory");
    for (int64_t i = 0; i < n; i++) {
        items[i].name = names[i];
        items[i].t = cg_contiguous(tensors[i]);
        if (!items[i].t) {
            st = cg_last_error();
            goto done;
        }
    }
    qsort(items, (size_t)n, sizeof *items, item_order);
    if (!put_text(&head, &len, &cap, "{", 0, 0)) goto oom;
    int64_t offset = 0;
    for (int64_t i = 0; i < n; i++) {
        cg_tensor *t = items[i].t;
        int64_t nbytes = cg_tensor_numel(t) * (int64_t)cg_dtype_size(cg_tensor_dtype(t));
        if ((i && !put_text(&head, &len, &cap, ",", 0, 0)) || !put_json_string(&head, &len, &cap, items[i].name))
            goto oom;
        char dt[64];
        snprintf(dt, sizeof dt, ":{\"dtype\":\"%s\",\"shape\":[", code_of(cg_tensor_dtype(t)));
        if (!put_text(&head, &len, &cap, dt, 0, 0)) goto oom;
        for (int d = 0; d < cg_tensor_ndim(t); d++)
            if (!put_text(&head, &len, &cap, d ? ",%lld" : "%lld", (long long)cg_tensor_shape(t)[d], 0)) goto oom;
        if (!put_text(&head, &len, &cap, "],\"data_offsets\":[%lld,%lld]}", (long long)offset,
                      (long long)(offset + nbytes)))
            goto oom;
        offset += nbytes;
    }
    if (!put_text(&head, &len, &cap, "}", 0, 0)) goto oom;
    while (len % 8)
        if (!put_text(&head, &len, &cap, " ", 0, 0)) goto oom; /* data starts 8-byte aligned */
    /* a new file beside the target, renamed over it once whole (a crash leaves the old or the new) */
    size_t plen = strlen(path);
    tmp = malloc(plen + 32);
    if (!tmp) goto oom;
    snprintf(tmp, plen + 32, "%s.%ld.tmp", path, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        st = cg_set_error(CG_ERR_RUNTIME, "[save_safetensors] cannot create %s: %s", tmp, strerror(errno));
        goto done;
    }
    uint64_t hl = len;
    unsigned char le[8];
    for (int b = 0; b < 8; b++) le[b] = (unsigned char)(hl >> (8 * b));
    bool ok = write_all(fd, le, 8) && write_all(fd, head, len);
    for (int64_t i = 0; ok && i < n; i++) {
        cg_tensor *t = items[i].t;
        size_t nbytes = (size_t)cg_tensor_numel(t) * cg_dtype_size(cg_tensor_dtype(t));
        ok = !nbytes || write_all(fd, cg_tensor_data(t), nbytes);
    }
    ok = ok && fsync(fd) == 0;
    if (close(fd) != 0) ok = false;
    fd = -1;
    if (!ok || rename(tmp, path) != 0) {
        st = cg_set_error(CG_ERR_RUNTIME, "[save_safetensors] cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    goto done;
oom:
    st = cg_set_error(CG_ERR_OOM, "[save_safetensors] out of memory");
done:
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    for (int64_t i = 0; i < n; i++) cg_tensor_release(items[i].t);
    free(items);
    free(head);
    free(tmp);
    return st;
}

/* ------------------------------------------------------------------ load */

struct cg_checkpoint {
    int64_t n;
    char **names;
    cg_tensor **tensors;
    int64_t nmeta;
    char **meta; /* key, value, key, value, ... */
};

void cg_checkpoint_free(cg_checkpoint *c) {
    if (!c) return;
    for (int64_t i = 0; i < c->n; i++) {
        free(c->names[i]);
        cg_tensor_release(c->tensors[i]);
    }
    for (int64_t i = 0; i < 2 * c->nmeta; i++) free(c->meta[i]);
    free(c->names);
    free(c->tensors);
    free(c->meta);
    free(c);
}
int64_t cg_checkpoint_count(const cg_checkpoint *c) { return c ? c->n : 0; }
const char *cg_checkpoint_name(const cg_checkpoint *c, int64_t i) {
    CG_CHECK(c && i >= 0 && i < c->n, CG_ERR_INDEX, "[checkpoint] index %lld out of range", (long long)i);
    return c->names[i];
}
cg_tensor *cg_checkpoint_tensor(const cg_checkpoint *c, int64_t i) {
    CG_CHECK(c && i >= 0 && i < c->n, CG_ERR_INDEX, "[checkpoint] index %lld out of range", (long long)i);
    cg_tensor_retain(c->tensors[i]);
    return c->tensors[i];
}
cg_tensor *cg_checkpoint_get(const cg_checkpoint *c, const char *name) {
    for (int64_t i = 0; c && name && i < c->n; i++)
        if (strcmp(c->names[i], name) == 0) return cg_checkpoint_tensor(c, i);
    cg_set_error(CG_ERR_INDEX, "[checkpoint] no tensor named '%s'", name ? name : "(null)");
    return NULL;
}
const char *cg_checkpoint_metadata(const cg_checkpoint *c, const char *key) {
    for (int64_t i = 0; c && key && i < c->nmeta; i++)
        if (strcmp(c->meta[2 * i], key) == 0) return c->meta[2 * i + 1];
    return NULL;
}

/* well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), as Python decodes */
static bool valid_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k;
        unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return false;
        }
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi) return false;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80) return false;
        i += k + 1;
    }
    return true;
}

/* Strict JSON (RFC 8259), as the Python loader's json module reads it, checked before cJSON
 * builds the tree: cJSON also takes leading zeros, '+1', bad \u escapes and raw control
 * characters (a raw NUL would cut a name short). Nesting stops at 1000, as cJSON's does. */
typedef struct {
    const char *p, *e;
    int depth;
} jscan;

static void js_ws(jscan *j) {
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}
static bool js_digit(const jscan *j) { return j->p < j->e && *j->p >= '0' && *j->p <= '9'; }
static bool js_string(jscan *j) {
    if (j->p >= j->e || *j->p != '"') return false;
    j->p++;
    while (j->p < j->e) {
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"') return true;
        if (c < 0x20) return false;
        if (c != '\\') continue;
        if (j->p >= j->e) return false;
        c = (unsigned char)*j->p++;
        if (c == 'u') {
            for (int k = 0; k < 4; k++, j->p++)
                if (j->p >= j->e || !((*j->p >= '0' && *j->p <= '9') || (*j->p >= 'a' && *j->p <= 'f') ||
                                      (*j->p >= 'A' && *j->p <= 'F')))
                    return false;
        } else if (!strchr("\"\\/bfnrt", c) || !c) {
            return false;
        }
    }
    return false;
}
static bool js_number(jscan *j) {
    if (j->p < j->e && *j->p == '-') j->p++;
    if (j->p < j->e && *j->p == '0') {
        j->p++;
    } else if (js_digit(j)) {
        while (js_digit(j)) j->p++;
    } else {
        return false;
    }
    if (j->p < j->e && *j->p == '.') {
        j->p++;
        if (!js_digit(j)) return false;
        while (js_digit(j)) j->p++;
    }
    if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->e && (*j->p == '+' || *j->p == '-')) j->p++;
        if (!js_digit(j)) return false;
        while (js_digit(j)) j->p++;
    }
    return true;
}
static bool js_word(jscan *j, const char *w) {
    size_t k = strlen(w);
    if ((size_t)(j->e - j->p) < k || memcmp(j->p, w, k) != 0) return false;
    j->p += k;
    return true;
}
static bool js_value(jscan *j) {
    js_ws(j);
    if (j->p >= j->e) return false;
    char c = *j->p;
    if (c == '{' || c == '[') {
        if (++j->depth > 1000) return false;
        char close = c == '{' ? '}' : ']';
        j->p++;
        js_ws(j);
        if (j->p < j->e && *j->p == close) {
            j->p++;
            j->depth--;
            return true;
        }
        for (;;) {
            if (c == '{') {
                js_ws(j);
                if (!js_string(j)) return false;
                js_ws(j);
                if (j->p >= j->e || *j->p != ':') return false;
                j->p++;
            }
            if (!js_value(j)) return false;
            js_ws(j);
            if (j->p >= j->e) return false;
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p != close) return false;
            j->p++;
            j->depth--;
            return true;
        }
    }
    if (c == '"') return js_string(j);
    if (c == 't') return js_word(j, "true");
    if (c == 'f') return js_word(j, "false");
    if (c == 'n') return js_word(j, "null");
    return js_number(j);
}
static bool strict_json(const char *s, size_t n) {
    jscan j = {s, s + n, 0};
    if (!js_value(&j)) return false;
    js_ws(&j);
    return j.p == j.e;
}

static int name_order(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* an object's keys, sorted, so a header of 100 000 keys stays fast; true (error set) when one repeats */
static bool has_duplicate_key(const cJSON *obj, int count) {
    char **keys = malloc(((size_t)count + 1) * sizeof *keys);
    if (!keys) {
        cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
        return true;
    }
    int k = 0;
    for (const cJSON *e = obj->child; e; e = e->next) keys[k++] = e->string;
    qsort(keys, (size_t)k, sizeof *keys, name_order);
    bool dup = false;
    for (int i = 1; i < k && !dup; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0) {
            BAD("duplicate key '%s'", keys[i]);
            dup = true;
        }
    free(keys);
    return dup;
}

/* a JSON number that is an integer in [0, 2^53) */
static bool json_count(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (!(d >= 0) || d >= 9007199254740992.0 || d != floor(d)) return false;
    *out = (int64_t)d;
    return true;
}

typedef struct {
    const char *name;
    cg_dtype dt;
    int ndim;
    int64_t shape[CG_MAX_DIMS];
    int64_t begin, end;
} entry;

static int entry_by_offset(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* read every field of one entry (Python's _parse_entries, the same checks and words) */
static cg_status parse_entry(const cJSON *e, entry *out, uint64_t data_len) {
    const char *name = e->string;
    int fields = 0;
    for (const cJSON *f = e->child; f; f = f->next) fields++;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsObject(e) || fields != 3 || !dt || !shape || !offs)
        return BAD("tensor '%s' must have exactly dtype, shape and data_offsets", name);
    if (!cJSON_IsString(dt)) return BAD("tensor '%s': dtype must be a string", name);
    out->name = name;
    out->dt = CG_DTYPE_COUNT;
    for (size_t i = 0; i < sizeof k_codes / sizeof *k_codes; i++)
        if (strcmp(dt->valuestring, k_codes[i].code) == 0) out->dt = k_codes[i].dt;
    if (out->dt == CG_DTYPE_COUNT) {
        for (size_t i = 0; i < sizeof k_unsupported / sizeof *k_unsupported; i++)
            if (strcmp(dt->valuestring, k_unsupported[i]) == 0)
                return BAD("tensor '%s': dtype %s is not supported by cgrad", name, dt->valuestring);
        return BAD("tensor '%s': unknown dtype '%s'", name, dt->valuestring);
    }
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > CG_MAX_DIMS)
        return BAD("tensor '%s': shape must be a list of at most %d non-negative integers", name, CG_MAX_DIMS);
    out->ndim = 0;
    int64_t numel = 1;
    bool overflow = false;
    for (const cJSON *s = shape->child; s; s = s->next) {
        int64_t d;
        if (!json_count(s, &d)) {
            if (cJSON_IsNumber(s) && s->valuedouble >= 9007199254740992.0 && s->valuedouble == floor(s->valuedouble)) {
                overflow = true; /* a dimension beyond 2^53: its bytes overflow what any file holds */
                d = INT64_MAX;
            } else {
                return BAD("tensor '%s': shape must be a list of non-negative integers", name);
            }
        }
        out->shape[out->ndim++] = d;
        if (!overflow && !cg_mul_ok(numel, d, &numel)) overflow = true;
    }
    size_t nbytes = 0;
    if (overflow || !cg_bytes_ok(numel, cg_dtype_size(out->dt), &nbytes))
        return BAD("tensor '%s': the byte size of shape overflows", name);
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        return BAD("tensor '%s': data_offsets must be an increasing pair of integers", name);
    int64_t b = 0, en = 0;
    bool bok = json_count(offs->child, &b), eok = json_count(offs->child->next, &en);
    if (!(cJSON_IsNumber(offs->child) && cJSON_IsNumber(offs->child->next)) ||
        offs->child->valuedouble < 0 || offs->child->next->valuedouble < 0 ||
        offs->child->valuedouble != floor(offs->child->valuedouble) ||
        offs->child->next->valuedouble != floor(offs->child->next->valuedouble))
        return BAD("tensor '%s': data_offsets must be an increasing pair of integers", name);
    if (!bok || !eok) /* integers beyond 2^53: past any file's data */
        return BAD("tensor '%s': data_offsets [%.0f, %.0f] lie beyond the data section (%llu bytes)", name,
                   offs->child->valuedouble, offs->child->next->valuedouble, (unsigned long long)data_len);
    if (en < b) return BAD("tensor '%s': data_offsets must be an increasing pair, got [%lld, %lld]", name,
                           (long long)b, (long long)en);
    if ((uint64_t)en > data_len)
        return BAD("tensor '%s': data_offsets [%lld, %lld] lie beyond the data section (%llu bytes)", name,
                   (long long)b, (long long)en, (unsigned long long)data_len);
    if ((uint64_t)(en - b) != nbytes) {
        char sh[CG_SHAPE_STR];
        return BAD("tensor '%s': data_offsets span %lld bytes, and shape %s of %s needs %zu", name,
                   (long long)(en - b), cg_shape_str(sh, out->ndim, out->shape), dt->valuestring, nbytes);
    }
    out->begin = b;
    out->end = en;
    return CG_OK;
}

static bool read_at(int fd, void *buf, size_t n, uint64_t off) {
    char *p = buf;
    while (n) {
        ssize_t k = pread(fd, p, n > (1u << 30) ? (1u << 30) : n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return true;
}

static cg_checkpoint *load_fd(int fd, uint64_t size);

cg_checkpoint *cg_load_safetensors(const char *path) {
    CG_CHECK(path, CG_ERR_VALUE, "[load_safetensors] path is NULL");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CG_CHECK(fd >= 0, CG_ERR_RUNTIME, "[load_safetensors] cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        cg_set_error(CG_ERR_VALUE, "[load_safetensors] %s is not a regular file", path);
        return NULL;
    }
    cg_checkpoint *c = load_fd(fd, (uint64_t)sb.st_size);
    close(fd);
    return c;
}

static cg_checkpoint *load_fd(int fd, uint64_t size) {
    unsigned char le[8];
    if (size < 8 || !read_at(fd, le, 8, 0)) {
        BAD("the file has %llu bytes, fewer than the 8-byte header length", (unsigned long long)size);
        return NULL;
    }
    uint64_t hl = 0;
    for (int b = 0; b < 8; b++) hl |= (uint64_t)le[b] << (8 * b);
    if (hl > ST_MAX_HEADER) {
        BAD("the header length %llu exceeds the limit of %llu bytes", (unsigned long long)hl, ST_MAX_HEADER);
        return NULL;
    }
    if (hl == 0) {
        BAD("header length 0: the header must hold at least {}");
        return NULL;
    }
    if (8 + hl > size) {
        BAD("the header length %llu runs past the end of the file (%llu bytes)", (unsigned long long)hl,
            (unsigned long long)size);
        return NULL;
    }
    uint64_t data_len = size - 8 - hl;
    char *text = malloc(hl);
    cg_checkpoint *c = NULL;
    cJSON *root = NULL;
    entry *es = NULL;
    if (!text) {
        cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory for a header of %llu bytes",
                     (unsigned long long)hl);
        return NULL;
    }
    if (!read_at(fd, text, hl, 8)) {
        BAD("the file ended inside the header");
        goto fail;
    }
    const char *end = NULL;
    if (!valid_utf8((const unsigned char *)text, hl) || !strict_json(text, hl) ||
        !(root = cJSON_ParseWithLengthOpts(text, hl, &end, false))) {
        BAD("the header is not valid UTF-8 JSON");
        goto fail;
    }
    for (const char *p = end; p < text + hl; p++)
        if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') {
            BAD("the header is not valid UTF-8 JSON (data after the object)");
            goto fail;
        }
    if (!cJSON_IsObject(root)) {
        BAD("the header is not an object");
        goto fail;
    }
    int count = cJSON_GetArraySize(root);
    c = calloc(1, sizeof *c);
    es = calloc((size_t)count + 1, sizeof *es);
    if (!c || !es) {
        cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
        goto fail;
    }
    if (has_duplicate_key(root, count)) goto fail;
    int64_t n = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(e)) {
                BAD("__metadata__ must be an object of strings");
                goto fail;
            }
            int nm = cJSON_GetArraySize(e);
            if (has_duplicate_key(e, nm)) goto fail;
            c->meta = calloc(2 * (size_t)nm + 1, sizeof *c->meta);
            if (!c->meta) {
                cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
                goto fail;
            }
            for (const cJSON *m = e->child; m; m = m->next) {
                if (!cJSON_IsString(m)) {
                    BAD("__metadata__ must be an object of strings ('%s' is not a string)", m->string);
                    goto fail;
                }
                c->meta[2 * c->nmeta] = strdup(m->string);
                c->meta[2 * c->nmeta + 1] = strdup(m->valuestring);
                c->nmeta++;
                if (!c->meta[2 * c->nmeta - 2] || !c->meta[2 * c->nmeta - 1]) {
                    cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
                    goto fail;
                }
            }
            continue;
        }
        if (parse_entry(e, &es[n], data_len)) goto fail;
        n++;
    }
    /* the tensors tile the data section: no overlap, no gap, nothing after them (as the Python loader) */
    entry *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    if (!sorted) {
        cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
        goto fail;
    }
    memcpy(sorted, es, (size_t)n * sizeof *es);
    qsort(sorted, (size_t)n, sizeof *sorted, entry_by_offset);
    int64_t covered = 0;
    for (int64_t i = 0; i < n; i++) {
        if (sorted[i].begin < covered) {
            BAD("tensor '%s': data_offsets [%lld, %lld] overlap another tensor", sorted[i].name,
                (long long)sorted[i].begin, (long long)sorted[i].end);
            free(sorted);
            goto fail;
        }
        if (sorted[i].begin > covered) {
            BAD("tensor '%s': the data section has a gap of %lld bytes before it", sorted[i].name,
                (long long)(sorted[i].begin - covered));
            free(sorted);
            goto fail;
        }
        covered = sorted[i].end;
    }
    free(sorted);
    if ((uint64_t)covered != data_len) {
        BAD("the tensors cover %lld bytes but the data section has %llu", (long long)covered,
            (unsigned long long)data_len);
        goto fail;
    }
    c->names = calloc((size_t)n + 1, sizeof *c->names);
    c->tensors = calloc((size_t)n + 1, sizeof *c->tensors);
    if (!c->names || !c->tensors) {
        cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
        goto fail;
    }
    for (int64_t i = 0; i < n; i++) {
        cg_tensor *t = cg_empty(es[i].ndim, es[i].shape, es[i].dt, cg_cpu());
        if (!t) goto fail;
        c->tensors[c->n] = t;
        c->names[c->n] = strdup(es[i].name);
        c->n++;
        if (!c->names[c->n - 1]) {
            cg_set_error(CG_ERR_OOM, "[load_safetensors] out of memory");
            goto fail;
        }
        size_t nbytes = (size_t)(es[i].end - es[i].begin);
        if (nbytes && !read_at(fd, cg_tensor_data(t), nbytes, 8 + hl + (uint64_t)es[i].begin)) {
            BAD("the file ended inside tensor '%s'", es[i].name);
            goto fail;
        }
        if (es[i].dt == CG_DTYPE_BOOL) {
            const unsigned char *p = cg_tensor_data(t);
            for (size_t k = 0; k < nbytes; k++)
                if (p[k] > 1) {
                    BAD("a bool tensor holds bytes other than 0 and 1 ('%s')", es[i].name);
                    goto fail;
                }
        }
    }
    cJSON_Delete(root);
    free(text);
    free(es);
    return c;
fail:
    cJSON_Delete(root);
    free(text);
    free(es);
    cg_checkpoint_free(c);
    return NULL;
}
