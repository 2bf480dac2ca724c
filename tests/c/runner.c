/* runner.c — the C test runner: runs every registered test (or those whose
 * name contains argv[1]) and ends with the line "N passed, M failed". One
 * runner is linked per CPU level (Note [CPU levels]); a runner whose level this
 * CPU lacks says so and exits 0 before any engine code runs. */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *name; cg_test_fn fn; const char *file; } test_entry;
static test_entry *g_tests;
static int g_ntests, g_cap;
static int g_failures;

void cg_test_register(const char *name, cg_test_fn fn, const char *file) {
    if (g_ntests == g_cap) {
        g_cap = g_cap ? g_cap * 2 : 64;
        g_tests = realloc(g_tests, (size_t)g_cap * sizeof *g_tests);
        if (!g_tests) abort();
    }
    g_tests[g_ntests++] = (test_entry){name, fn, file};
}

void cg_test_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_failures++;
}

int cg_test_failures(void) { return g_failures; }

void cg_test_check_err(int is_error, cg_status code, const char *substr, const char *expr, const char *file, int line) {
    if (!is_error) {
        cg_test_fail(file, line, "%s: expected an error %s, got success", expr, cg_status_name(code));
        return;
    }
    if (cg_last_error() != code)
        cg_test_fail(file, line, "%s: expected %s, got %s (%s)", expr, cg_status_name(code),
                     cg_status_name(cg_last_error()), cg_last_error_message());
    else if (substr && !strstr(cg_last_error_message(), substr))
        cg_test_fail(file, line, "%s: message \"%s\" lacks \"%s\"", expr, cg_last_error_message(), substr);
    cg_clear_error();
}

static int cmp_entry(const void *a, const void *b) {
    const test_entry *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    cg_cpu_level built = cg_cpu_level_built(), have = cg_cpu_level_supported();
    if (built > have) {
        printf("skipped: this runner's engine is built for %s; this CPU runs %s\n", cg_cpu_level_name(built),
               cg_cpu_level_name(have));
        return 0;
    }
    printf("engine built for %s (this CPU runs %s)\n", cg_cpu_level_name(built), cg_cpu_level_name(have));
    qsort(g_tests, (size_t)g_ntests, sizeof *g_tests, cmp_entry);
    int passed = 0, failed = 0;
    for (int i = 0; i < g_ntests; i++) {
        if (filter && !strstr(g_tests[i].name, filter)) continue;
        int before = g_failures;
        cg_clear_error();
        g_tests[i].fn();
        if (g_failures == before) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAILED: %s (%s)\n", g_tests[i].name, g_tests[i].file);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
