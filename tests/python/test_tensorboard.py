"""cgrad.utils.tensorboard against torch.utils.tensorboard: each test makes
the same calls through both SummaryWriters into two temporary log dirs, reads
both back with TensorBoard's own readers (EventAccumulator, EventFileLoader,
tensor_util) and compares what they decode to: scalars, histogram buckets,
image pixels, text, hparams plugin data, PR-curve tensors, projector files.
Where PyTorch's own output cannot be read back (float16 / uint8 tensors,
video without moviepy) the test checks the decoded values themselves."""
from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import wave

import numpy as np
import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
PIL_Image = pytest.importorskip("PIL.Image")

import cgrad  # noqa: E402
import torch.utils.tensorboard as ttb  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator as ea_mod  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

import cgrad.utils.tensorboard as ctb  # noqa: E402

ALL = {ea_mod.SCALARS: 0, ea_mod.IMAGES: 0, ea_mod.AUDIO: 0, ea_mod.HISTOGRAMS: 0,
       ea_mod.TENSORS: 0, ea_mod.COMPRESSED_HISTOGRAMS: 0}


def _acc(logdir):
    acc = ea_mod.EventAccumulator(str(logdir), size_guidance=ALL)
    acc.Reload()
    return acc


def both(tmp_path, calls, **kwargs):
    """Run calls(writer, T) with T = cgrad and T = torch; return the two log dirs."""
    dirs = []
    for name, mod, lib in (("cg", ctb, cgrad), ("pt", ttb, torch)):
        d = tmp_path / name
        w = mod.SummaryWriter(str(d), **kwargs)
        calls(w, lib)
        w.close()
        dirs.append(d)
    return dirs


def events(logdir):
    """Every event of the one event file in logdir, as (step, what, payload)."""
    files = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents")]
    out = []
    for f in sorted(files):
        for ev in EventFileLoader(os.path.join(logdir, f)).Load():
            ev.wall_time = 0
            out.append(ev)
    return out


def pixels(encoded):
    return np.asarray(PIL_Image.open(io.BytesIO(encoded)))


# --- packaging ---------------------------------------------------------------------------------------

def test_import_is_lazy_and_works():
    code = ("import sys, cgrad, cgrad.utils; assert 'cgrad.utils.tensorboard' not in sys.modules; "
            "assert 'tensorboard' not in sys.modules; import cgrad.utils.tensorboard as tb; "
            "from cgrad.utils.tensorboard import SummaryWriter, FileWriter, RecordWriter; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "ok", r.stderr


def test_missing_tensorboard_is_a_clear_import_error():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import cgrad.utils.tensorboard\nexcept ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "pip install tensorboard" in r.stdout, (r.stdout, r.stderr)


def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = ctb.SummaryWriter(comment="_exp")
    p = ttb.SummaryWriter(comment="_exp")
    host = re.escape(socket.gethostname())
    pat = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + host + "_exp"
    assert re.fullmatch(pat, w.get_logdir()) and re.fullmatch(pat, p.get_logdir())
    w.close()
    p.close()
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(w.get_logdir()))


def test_filename_suffix_and_reopen_after_close(tmp_path):
    w = ctb.SummaryWriter(str(tmp_path), filename_suffix=".v1")
    w.add_scalar("a", 1.0, 0)
    w.close()
    w.close()  # a second close is ignored
    w.add_scalar("a", 2.0, 1)  # writing after close opens a new event file, as in PyTorch
    w.flush()
    w.close()
    files = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents")]
    assert all(f.endswith(".v1") for f in files) and len(files) == 2
    assert [(e.step, e.value) for e in _acc(tmp_path).Scalars("a")] == [(0, 1.0), (1, 2.0)]


# --- scalars -------------------------------------------------------------------------------------------

def test_add_scalar_matches_torch(tmp_path):
    def calls(w, T):
        w.add_scalar("loss", T.tensor(0.25), 0)
        w.add_scalar("loss", T.tensor([0.5]), 1)
        w.add_scalar("loss", np.float32(0.75), 2)
        w.add_scalar("loss", 3, 3, walltime=1234.5)
        w.add_scalar("loss", np.array([[4.0]]), np.int64(4))
        w.add_scalar("other", 1.0)  # no global_step
        w.add_scalar("new", T.tensor(2.5), 7, new_style=True)
        w.add_scalar("dbl", 1 / 3, 8, new_style=True, double_precision=True)
    c, p = both(tmp_path, calls)
    a, b = _acc(c), _acc(p)
    for tag in ("loss", "other"):
        assert [(e.step, e.value) for e in a.Scalars(tag)] == [(e.step, e.value) for e in b.Scalars(tag)]
    assert a.Scalars("loss")[3].wall_time == b.Scalars("loss")[3].wall_time == 1234.5
    for tag in ("new", "dbl"):
        x, y = a.Tensors(tag)[0], b.Tensors(tag)[0]
        assert x.step == y.step
        assert x.tensor_proto == y.tensor_proto
        assert a.SummaryMetadata(tag) == b.SummaryMetadata(tag)
    assert tensor_util.make_ndarray(a.Tensors("dbl")[0].tensor_proto) == 1 / 3


def test_add_scalars_one_run_per_tag(tmp_path):
    def calls(w, T):
        for s in range(3):
            w.add_scalars("run/main", {"a": T.tensor(float(s)), "b": s * 2.0}, s, walltime=10.0 + s)
    c, p = both(tmp_path, calls)
    runs_c = sorted(os.listdir(c))
    runs_p = sorted(os.listdir(p))
    assert [r for r in runs_c if not r.startswith("events")] == [r for r in runs_p if not r.startswith("events")] \
        == ["run_main_a", "run_main_b"]
    for run in ("run_main_a", "run_main_b"):
        x, y = _acc(c / run).Scalars("run/main"), _acc(p / run).Scalars("run/main")
        assert [(e.wall_time, e.step, e.value) for e in x] == [(e.wall_time, e.step, e.value) for e in y]


def test_scalar_bad_input(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="add_scalar: scalar_value must hold exactly one element"):
            w.add_scalar("x", cgrad.ones(3))
        with pytest.raises(TypeError, match="add_scalar: scalar_value must be a cgrad tensor"):
            w.add_scalar("x", "1.0")
        with pytest.raises(TypeError, match="global_step must be an integer"):
            w.add_scalar("x", 1.0, "a")
        with pytest.raises(ValueError, match="meta device"):
            w.add_scalar("x", cgrad.ones((), device="meta"))


# --- tensors -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64", "bool"])
def test_add_tensor_matches_torch(tmp_path, dtype):
    def calls(w, T):
        w.add_tensor("t", (T.arange(12) - 5).reshape(3, 4).to(getattr(T, dtype)), 3)
    c, p = both(tmp_path, calls)
    x, y = _acc(c).Tensors("t")[0], _acc(p).Tensors("t")[0]
    assert x.step == y.step == 3 and x.tensor_proto == y.tensor_proto
    np.testing.assert_array_equal(tensor_util.make_ndarray(x.tensor_proto),
                                  (np.arange(12) - 5).reshape(3, 4).astype(dtype))


@pytest.mark.parametrize("dtype", ["float16", "uint8", "uint16", "uint32", "uint64"])
def test_add_tensor_decodes_where_torch_cannot(tmp_path, dtype):
    # PyTorch stores float16 as float32 bit patterns and uint8 in uint32_val, which TensorBoard's
    # reader cannot decode; cgrad writes the fields the reader expects
    vals = np.array([[0, 1.5, 2, 250], [3, 4.25, 65, 7]]).astype(dtype)
    with ctb.SummaryWriter(str(tmp_path)) as w:
        w.add_tensor("t", cgrad.from_numpy(vals))
    got = tensor_util.make_ndarray(_acc(tmp_path).Tensors("t")[0].tensor_proto)
    assert got.dtype == vals.dtype
    np.testing.assert_array_equal(got, vals)


def test_add_tensor_bfloat16_bits(tmp_path):
    t = cgrad.tensor([1.5, -2.0, 3.140625], dtype=cgrad.bfloat16)
    with ctb.SummaryWriter(str(tmp_path)) as w:
        w.add_tensor("t", t)
        w.add_tensor("n", np.ones((2, 2), dtype=np.float32))
    proto = _acc(tmp_path).Tensors("t")[0].tensor_proto
    assert proto.dtype == 14  # DT_BFLOAT16
    ref = torch.tensor([1.5, -2.0, 3.140625], dtype=torch.bfloat16).view(torch.int16).numpy().astype(np.uint16)
    assert list(proto.half_val) == ref.tolist()
    np.testing.assert_array_equal(tensor_util.make_ndarray(_acc(tmp_path).Tensors("n")[0].tensor_proto),
                                  np.ones((2, 2)))


def test_add_tensor_bad_input(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(TypeError, match="add_tensor: tensor must be a cgrad tensor or a NumPy array"):
            w.add_tensor("t", [1, 2])
        with pytest.raises(ValueError, match="add_tensor: .* unsupported dtype"):
            w.add_tensor("t", np.array(["a"]))


# --- histograms ----------------------------------------------------------------------------------------

def _hist(acc, tag):
    return [(e.step, e.histogram_value) for e in acc.Histograms(tag)]


@pytest.mark.parametrize("bins", ["tensorflow", "auto", "fd", "doane", 7, "edges"])
def test_add_histogram_matches_torch(tmp_path, bins):
    vals = np.random.RandomState(1).randn(500) * 3

    def calls(w, T):
        b = T.tensor([-5.0, -1.0, 0.0, 0.5, 2.0, 9.0]) if bins == "edges" else bins
        if bins == "edges" and T is torch:
            b = b.numpy()
        w.add_histogram("h", T.tensor(vals), 1, bins=b)
        w.add_histogram("h", T.tensor(vals[:50]).reshape(5, 10).float(), 2, bins=b)
        w.add_histogram("max", T.tensor(vals), 3, bins=b, max_bins=3)
        w.add_histogram("np", vals + 100, 4, bins=b if bins != "edges" else b + 100)
    c, p = both(tmp_path, calls)
    a, b = _acc(c), _acc(p)
    for tag in ("h", "max", "np"):
        x, y = _hist(a, tag), _hist(b, tag)
        assert [s for s, _ in x] == [s for s, _ in y]
        for (_, hx), (_, hy) in zip(x, y):
            assert hx.min == hy.min and hx.max == hy.max and hx.num == hy.num
            assert hx.sum == pytest.approx(hy.sum) and hx.sum_squares == pytest.approx(hy.sum_squares)
            assert list(hx.bucket_limit) == list(hy.bucket_limit)
            assert list(hx.bucket) == list(hy.bucket)


def test_add_histogram_raw_matches_torch(tmp_path):
    def calls(w, T):
        w.add_histogram_raw("r", min=-1.0, max=3.0, num=6, sum=5.0, sum_squares=15.0,
                            bucket_limits=[0.0, 1.0, 3.0], bucket_counts=[1, 2, 3], global_step=5)
    c, p = both(tmp_path, calls)
    assert _hist(_acc(c), "r") == _hist(_acc(p), "r")


def test_histogram_bad_input(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="add_histogram: values has no element"):
            w.add_histogram("h", cgrad.zeros(0))
        with pytest.raises(ValueError, match="add_histogram: cannot bucket"):
            w.add_histogram("h", cgrad.ones(3), bins="nope")
        with pytest.raises(ValueError, match="add_histogram_raw: bucket_limits"):
            w.add_histogram_raw("r", 0, 1, 2, 1, 1, [1.0, 2.0], [1])


# --- images --------------------------------------------------------------------------------------------

def _img(acc, tag):
    return [(e.step, e.width, e.height, pixels(e.encoded_image_string)) for e in acc.Images(tag)]


def _same_images(c, p, tags):
    a, b = _acc(c), _acc(p)
    for tag in tags:
        x, y = _img(a, tag), _img(b, tag)
        assert len(x) == len(y) > 0, tag
        for (s1, w1, h1, p1), (s2, w2, h2, p2) in zip(x, y):
            assert (s1, w1, h1) == (s2, w2, h2), tag
            assert p1.shape == p2.shape and p1.dtype == p2.dtype, tag
            np.testing.assert_array_equal(p1, p2, err_msg=tag)


def test_add_image_matches_torch(tmp_path):
    rs = np.random.RandomState(0)
    chw = rs.rand(3, 5, 7).astype(np.float32)
    hwc8 = rs.randint(0, 256, (6, 4, 3)).astype(np.uint8)
    rgba = rs.rand(4, 5, 4)
    gray = (rs.rand(5, 6) * 1.4 - 0.2).astype(np.float32)  # out of [0, 1]: clipped

    def calls(w, T):
        w.add_image("chw", T.tensor(chw), 0)
        w.add_image("hwc8", T.tensor(hwc8), 1, dataformats="HWC")
        w.add_image("rgba", T.tensor(rgba), 2, dataformats="HWC")
        w.add_image("hw", T.tensor(gray), 3, dataformats="HW")
        w.add_image("wh", T.tensor(gray), 4, dataformats="WH")
        w.add_image("c1", T.tensor(chw[:1]), 5)
        w.add_image("np", chw.transpose(1, 2, 0), 6, dataformats="hwc")
        w.add_image("wch", T.tensor(chw).permute(2, 0, 1), 7, dataformats="WCH")
    c, p = both(tmp_path, calls)
    _same_images(c, p, ["chw", "hwc8", "rgba", "hw", "wh", "c1", "np", "wch"])
    got = _img(_acc(c), "hwc8")[0][3]
    np.testing.assert_array_equal(got, hwc8)
    assert _img(_acc(c), "rgba")[0][3].shape == (4, 5, 4)


def test_add_images_grid_matches_torch(tmp_path):
    rs = np.random.RandomState(2)
    batch = rs.rand(11, 3, 4, 5).astype(np.float32)

    def calls(w, T):
        w.add_images("nchw", T.tensor(batch), 0)
        w.add_images("nhwc", T.tensor(batch).permute(0, 2, 3, 1), 1, dataformats="NHWC")
        w.add_images("gray", T.tensor(batch[:3, :1]), 2)
        w.add_images("u8", T.tensor((batch[:5] * 255).astype(np.uint8)), 3)
        w.add_images("one", T.tensor(batch[:1]), 4)
    c, p = both(tmp_path, calls)
    _same_images(c, p, ["nchw", "nhwc", "gray", "u8", "one"])
    _, w, h, px = _img(_acc(c), "nchw")[0]
    assert (w, h) == (8 * 5, 2 * 4)  # 8 images a row, 2 rows
    assert (px[4:, 15:] == 0).all()  # the unused cells of the last row are black


def test_image_bad_input(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="add_image: dataformats 'CHW' has 3 dimensions but the image has 4"):
            w.add_image("x", cgrad.rand(1, 3, 4, 4))
        with pytest.raises(ValueError, match="add_image: img_tensor must be 2-D, 3-D or 4-D"):
            w.add_image("x", cgrad.rand(4))
        with pytest.raises(ValueError, match="uses a dimension letter twice"):
            w.add_image("x", cgrad.rand(3, 4, 4), dataformats="CCH")
        with pytest.raises(ValueError, match="must be a permutation of"):
            w.add_image("x", cgrad.rand(3, 4, 4), dataformats="XYZ")
        with pytest.raises(ValueError, match="add_image: an image must have 1, 3 or 4 channels"):
            w.add_image("x", cgrad.rand(5, 4, 4))
        with pytest.raises(ValueError, match="add_images: images of a batch must have 1 or 3 channels"):
            w.add_images("x", cgrad.rand(2, 4, 4, 4))
        with pytest.raises(ValueError, match="add_images: dataformats 'NCHW' has 4 dimensions but the image has 3"):
            w.add_images("x", cgrad.rand(3, 4, 4))
        with pytest.raises(TypeError, match="add_image: dataformats must be a str"):
            w.add_image("x", cgrad.rand(3, 4, 4), dataformats=3)
        with pytest.raises(TypeError, match="add_image: img_tensor must be a cgrad tensor"):
            w.add_image("x", [[0.0]])


def test_add_image_with_boxes_matches_torch(tmp_path):
    rs = np.random.RandomState(6)
    img = rs.rand(3, 40, 50).astype(np.float32)
    boxes = np.array([[2, 3, 20, 30], [10, 5, 45, 38]], dtype=np.float32)

    def calls(w, T):
        w.add_image_with_boxes("b", T.tensor(img), T.tensor(boxes), 0)
        w.add_image_with_boxes("lab", T.tensor(img), T.tensor(boxes), 1, labels=["cat", "dog"])
        w.add_image_with_boxes("one", T.tensor(img).permute(1, 2, 0), T.tensor(boxes[:1]), 2,
                               dataformats="HWC", labels="solo", rescale=2)
        w.add_image_with_boxes("skip", T.tensor(img), T.tensor(boxes), 3, labels=["only one"])
    c, p = both(tmp_path, calls)
    _same_images(c, p, ["b", "lab", "one", "skip"])
    px = _img(_acc(c), "b")[0][3]
    assert (px[3, 2:21] == [255, 0, 0]).all()  # the top edge of the first box is red
    assert pixels(_acc(c).Images("one")[0].encoded_image_string).shape == (80, 100, 3)
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w, \
            pytest.raises(ValueError, match=r"add_image_with_boxes: box_tensor must have shape \(N, 4\)"):
        w.add_image_with_boxes("x", cgrad.rand(3, 4, 4), cgrad.zeros(2, 3))


def test_add_figure_matches_torch(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def fig(k):
        f = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot([0, 1, 2], [k, 2, 1 + k])
        return f

    def calls(w, T):
        w.add_figure("one", fig(0), 0)
        w.add_figure("many", [fig(1), fig(2)], 1)
        f = fig(3)
        w.add_figure("kept", f, 2, close=False)
        assert plt.fignum_exists(f.number)
        plt.close(f)
    c, p = both(tmp_path, calls)
    _same_images(c, p, ["one", "many", "kept"])
    assert _img(_acc(c), "many")[0][1:3] == (160, 60)


# --- text, audio, video --------------------------------------------------------------------------------

def test_add_text_matches_torch(tmp_path):
    def calls(w, T):
        w.add_text("note", "**hello** wörld", 3)
        w.add_text("note", "second", 4)
    c, p = both(tmp_path, calls)
    a, b = _acc(c), _acc(p)
    x, y = a.Tensors("note/text_summary"), b.Tensors("note/text_summary")
    assert [(e.step, e.tensor_proto) for e in x] == [(e.step, e.tensor_proto) for e in y]
    assert a.SummaryMetadata("note/text_summary") == b.SummaryMetadata("note/text_summary")
    assert tensor_util.make_ndarray(x[0].tensor_proto)[0].decode() == "**hello** wörld"
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w, pytest.raises(TypeError, match="add_text: text_string"):
        w.add_text("t", 3)


def _wav(encoded):
    with wave.open(io.BytesIO(encoded)) as r:
        return r.getnchannels(), r.getsampwidth(), r.getframerate(), np.frombuffer(r.readframes(r.getnframes()), "<i2")


def test_add_audio_matches_torch(tmp_path):
    snd = np.sin(np.linspace(0, 20, 800)) * 0.9

    def calls(w, T):
        w.add_audio("a", T.tensor(snd).reshape(1, -1), 1, sample_rate=8000)
        w.add_audio("a", T.tensor(snd * 2), 2)  # clipped to [-1, 1]
    with pytest.warns(UserWarning, match="add_audio: amplitude out of"):
        c, p = both(tmp_path, calls)
    x, y = _acc(c).Audio("a"), _acc(p).Audio("a")
    assert len(x) == len(y) == 2
    for e, f in zip(x, y):
        assert (e.step, e.sample_rate, e.length_frames, e.content_type) == \
            (f.step, f.sample_rate, f.length_frames, f.content_type)
        wc, wp = _wav(e.encoded_audio_string), _wav(f.encoded_audio_string)
        assert wc[:3] == wp[:3]
        np.testing.assert_array_equal(wc[3], wp[3])
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w, \
            pytest.raises(ValueError, match="add_audio: snd_tensor must be one-dimensional"):
        w.add_audio("a", cgrad.zeros(2, 10))


def test_add_video_gif(tmp_path):
    # PyTorch's add_video needs moviepy < 2 (moviepy.editor); cgrad encodes the GIF with Pillow,
    # so the check is on the decoded frames: PyTorch's grid layout (3 clips -> padded to 4, in
    # 2 ** ((bit_length(3) - 1) // 2) = 1 row)
    rs = np.random.RandomState(3)
    levels = np.array([0, 255], dtype=np.uint8)
    vid = levels[rs.randint(0, 2, (3, 5, 3, 4, 6))]  # two levels a channel: exact in a GIF palette
    with ctb.SummaryWriter(str(tmp_path)) as w:
        w.add_video("v", cgrad.from_numpy(vid), 2, fps=5)
        w.add_video("f", cgrad.from_numpy(vid[:1].astype(np.float32) / 255), 3)
    ev = _acc(tmp_path).Images("v")[0]
    assert (ev.step, ev.width, ev.height) == (2, 24, 4)
    gif = PIL_Image.open(io.BytesIO(ev.encoded_image_string))
    assert gif.format == "GIF" and gif.n_frames == 5
    expect = np.zeros((5, 4, 24, 3), dtype=np.uint8)
    for i in range(3):
        expect[:, :, i * 6:(i + 1) * 6] = vid[i].transpose(0, 2, 3, 1)
    for t in range(5):
        gif.seek(t)
        assert gif.info["duration"] == 200
        np.testing.assert_array_equal(np.asarray(gif.convert("RGB")), expect[t])
    ev = _acc(tmp_path).Images("f")[0]
    assert (ev.width, ev.height) == (6, 4)
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(ValueError, match=r"add_video: vid_tensor must be 5-D"):
            w.add_video("v", cgrad.zeros(2, 3, 4, 4))
        with pytest.raises(ValueError, match="add_video: fps must be a positive number"):
            w.add_video("v", cgrad.zeros(1, 2, 3, 4, 4), fps=0)


# --- hparams -------------------------------------------------------------------------------------------

def _hp_content(acc, tag):
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    md = acc.SummaryMetadata(tag)
    assert md.plugin_data.plugin_name == "hparams"
    return HParamsPluginData.FromString(md.plugin_data.content)


def test_add_hparams_matches_torch(tmp_path):
    def calls(w, T):
        w.add_hparams({"lr": 0.01, "bs": 32, "opt": "adam", "flag": True, "skip": None, "t": T.tensor([0.5])},
                      {"hp/acc": 0.9, "hp/loss": T.tensor(0.1)},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "bs": [16, 32]},
                      run_name="trial1", global_step=7)
    c, p = both(tmp_path, calls)
    assert sorted(os.listdir(c / "trial1")) and os.path.isdir(p / "trial1")
    a, b = _acc(c / "trial1"), _acc(p / "trial1")
    for tag in ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"):
        assert _hp_content(a, tag) == _hp_content(b, tag), tag
    for tag in ("hp/acc", "hp/loss"):
        assert [(e.step, e.value) for e in a.Scalars(tag)] == [(e.step, e.value) for e in b.Scalars(tag)]
    ssi = _hp_content(a, "_hparams_/session_start_info").session_start_info
    assert ssi.hparams["opt"].string_value == "adam" and ssi.hparams["lr"].number_value == 0.01


def test_add_hparams_default_run_name_and_errors(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"a": 1}, {"m": 2.0})
        subs = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
        assert len(subs) == 1 and float(subs[0]) > 1e9  # the time as the run name, as in PyTorch
        with pytest.raises(TypeError, match="add_hparams: hparam_dict and metric_dict must be dicts"):
            w.add_hparams([("a", 1)], {})
        with pytest.raises(ValueError, match=r"add_hparams: hparam_dict\['a'\] must be an int, float, str"):
            w.add_hparams({"a": [1]}, {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\['a'\]"):
            w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": ["x"]})


# --- PR curves, custom scalars, mesh -------------------------------------------------------------------

def test_add_pr_curve_matches_torch(tmp_path):
    rs = np.random.RandomState(4)
    labels = rs.randint(0, 2, 100)
    preds = rs.rand(100)
    weights = rs.rand(100)

    def calls(w, T):
        w.add_pr_curve("pr", T.tensor(labels), T.tensor(preds), 1)
        w.add_pr_curve("pr10", T.tensor(labels), T.tensor(preds).float(), 2, num_thresholds=10)
        w.add_pr_curve("big", labels, preds, 3, num_thresholds=500)  # capped at 127
        w.add_pr_curve("w", labels, preds, 4, weights=weights)
        w.add_pr_curve_raw("raw", [9, 5, 0], [8, 3, 0], [0, 5, 8], [0, 4, 9], [0.5, 0.6, 1.0], [1.0, 0.55, 0.0],
                           5, num_thresholds=3)
    c, p = both(tmp_path, calls)
    a, b = _acc(c), _acc(p)
    for tag in ("pr", "pr10", "big", "w", "raw"):
        x, y = a.Tensors(tag)[0], b.Tensors(tag)[0]
        assert x.step == y.step
        np.testing.assert_array_equal(tensor_util.make_ndarray(x.tensor_proto),
                                      tensor_util.make_ndarray(y.tensor_proto))
        assert a.SummaryMetadata(tag) == b.SummaryMetadata(tag)
    assert tensor_util.make_ndarray(a.Tensors("big")[0].tensor_proto).shape == (6, 127)
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(ValueError, match="add_pr_curve: labels .* must have the same shape"):
            w.add_pr_curve("x", np.ones(3), np.ones(4))
        with pytest.raises(ValueError, match="add_pr_curve_raw: the six"):
            w.add_pr_curve_raw("x", [1, 2], [1], [1], [1], [1], [1])


def test_add_custom_scalars_matches_torch(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2
    layout = {"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                      "nasdaq": ["Margin", ["nasdaq/aaa", "nasdaq/bbb", "nasdaq/ccc"]]}}

    def calls(w, T):
        w.add_custom_scalars(layout)
        w.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
        w.add_custom_scalars_marginchart(["v", "lo", "hi"])
    c, p = both(tmp_path, calls)
    x = [layout_pb2.Layout.FromString(v.tensor.string_val[0]) for v in
         (s for ev in events(c) if ev.HasField("summary") for s in ev.summary.value)]
    y = [layout_pb2.Layout.FromString(v.tensor.string_val[0]) for v in
         (s for ev in events(p) if ev.HasField("summary") for s in ev.summary.value)]
    assert len(x) == 3 and x == y
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(ValueError, match="add_custom_scalars: the Margin chart 'm' needs 3 tags"):
            w.add_custom_scalars({"c": {"m": ["Margin", ["a"]]}})
        with pytest.raises(ValueError, match="add_custom_scalars_marginchart: tags must be 3"):
            w.add_custom_scalars_marginchart(["a"])


def test_add_mesh_matches_torch(tmp_path):
    verts = np.array([[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]], dtype=np.float32)
    colors = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], dtype=np.int64)
    faces = np.array([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], dtype=np.int64)

    def calls(w, T):
        w.add_mesh("m", T.tensor(verts), colors=T.tensor(colors), faces=T.tensor(faces),
                   config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}}, global_step=2)
        w.add_mesh("pts", T.tensor(verts), global_step=3)
    c, p = both(tmp_path, calls)
    a, b = _acc(c), _acc(p)
    assert sorted(a.Tags()["tensors"]) == sorted(b.Tags()["tensors"]) == \
        ["m_COLOR", "m_FACE", "m_VERTEX", "pts_VERTEX"]
    for tag in a.Tags()["tensors"]:
        x, y = a.Tensors(tag)[0], b.Tensors(tag)[0]
        assert x.step == y.step and x.tensor_proto == y.tensor_proto
        assert a.SummaryMetadata(tag) == b.SummaryMetadata(tag)
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w, \
            pytest.raises(ValueError, match=r"add_mesh: vertices must have shape \(batch, count, 3\)"):
        w.add_mesh("m", cgrad.zeros(4, 3))


# --- embeddings ----------------------------------------------------------------------------------------

def test_add_embedding_matches_torch(tmp_path):
    rs = np.random.RandomState(5)
    mat = rs.randn(7, 4).astype(np.float32)
    imgs = rs.rand(7, 3, 5, 5).astype(np.float32)

    def calls(w, T):
        w.add_embedding(T.tensor(mat), metadata=list("abcdefg"), label_img=T.tensor(imgs))
        w.add_embedding(T.tensor(mat[:3]), metadata=[["a", 1], ["b", 2], ["c", 3]],
                        metadata_header=["name", "n"], global_step=4, tag="my/tag%")
        w.add_embedding(mat, global_step=5, tag="plain")
    c, p = both(tmp_path, calls)

    def files(root):
        out = {}
        for r, _, fs in os.walk(root):
            for f in fs:
                if not f.startswith("events"):
                    out[os.path.relpath(os.path.join(r, f), root)] = open(os.path.join(r, f), "rb").read()
        return out
    fc, fp = files(c), files(p)
    assert sorted(fc) == sorted(fp)
    assert "00004/my%2ftag%25/metadata.tsv" in fc
    for name in fc:
        if name.endswith(".png"):
            np.testing.assert_array_equal(pixels(fc[name]), pixels(fp[name]))
        else:
            assert fc[name] == fp[name], name
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(ValueError, match="add_embedding: mat must be 2-D"):
            w.add_embedding(cgrad.zeros(3))
        with pytest.raises(ValueError, match="add_embedding: metadata has 2 labels for 3 points"):
            w.add_embedding(cgrad.zeros(3, 2), metadata=["a", "b"])
        with pytest.raises(ValueError, match="add_embedding: label_img has 2 images for 3 points"):
            w.add_embedding(cgrad.zeros(3, 2), label_img=cgrad.zeros(2, 3, 4, 4))


# --- purge_step, graphs --------------------------------------------------------------------------------

def test_purge_step_events_match_torch(tmp_path):
    def calls(w, T):
        w.add_scalar("a", 1.0, 10)
    c, p = both(tmp_path, calls, purge_step=5)
    assert events(c) == events(p)
    assert [e.step for e in events(c)][:3] == [0, 5, 5]


class _CNet(cgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = cgrad.nn.Linear(4, 3)
        self.block = cgrad.nn.Sequential(cgrad.nn.Linear(3, 2), cgrad.nn.Tanh())

    def forward(self, x):
        return self.block(cgrad.relu(self.fc1(x)))


class _TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 3)
        self.block = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())

    def forward(self, x):
        return self.block(torch.relu(self.fc1(x)))


@pytest.mark.filterwarnings("ignore:`torch.jit.trace")
def test_add_graph(tmp_path):
    model = _CNet()
    with ctb.SummaryWriter(str(tmp_path / "cg")) as w:
        w.add_graph(model, cgrad.randn(2, 4))
    assert model.training  # restored after the eval-mode run
    with ttb.SummaryWriter(str(tmp_path / "pt")) as w:
        w.add_graph(_TNet(), torch.randn(2, 4))
    a, b = _acc(tmp_path / "cg"), _acc(tmp_path / "pt")
    assert a.Tags()["run_metadata"] == b.Tags()["run_metadata"] == ["step1"]
    g = {n.name: n for n in a.Graph().node}
    scopes = {n.name.rsplit("/", 1)[0] for n in g.values()}
    torch_scopes = {n.name.rsplit("/", 1)[0] for n in b.Graph().node if n.op not in ("prim::GetAttr",)}
    # the module scopes PyTorch writes (Net/Linear[fc1], Net/Sequential[block]/Linear[0], ...)
    mod_scopes = {s.replace("_TNet", "Net") for s in torch_scopes if "[" in s}
    assert {s.replace("_CNet", "Net") for s in scopes if "[" in s} >= mod_scopes
    assert g["input/x"].op == "IO Node"
    assert list(g["_CNet/Linear[fc1]/output"].input) == \
        ["input/x", "_CNet/Linear[fc1]/weight", "_CNet/Linear[fc1]/bias"]
    assert list(g["_CNet/Relu"].input) == ["_CNet/Linear[fc1]/output"]
    assert list(g["_CNet/Sequential[block]/Linear[0]/output"].input)[0] == "_CNet/Relu"
    assert list(g["_CNet/Sequential[block]/Tanh[1]/output"].input) == ["_CNet/Sequential[block]/Linear[0]/output"]
    assert list(g["output/output.1"].input) == ["_CNet/Sequential[block]/Tanh[1]/output"]
    shape = g["_CNet/Linear[fc1]/output"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in shape.dim] == [2, 3]
    with ctb.SummaryWriter(str(tmp_path / "bad")) as w:
        with pytest.raises(TypeError, match="add_graph: model must be a cgrad.nn.Module"):
            w.add_graph(lambda x: x, cgrad.ones(1))
        with pytest.raises(TypeError, match="add_graph: input_to_model must be a tensor"):
            w.add_graph(model, 3)
        with pytest.raises(NotImplementedError, match="add_onnx_graph"):
            w.add_onnx_graph("model.onnx")


class _InPlace(cgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = cgrad.nn.Parameter(cgrad.ones(3))

    def forward(self, x, steps: int = 3000):
        x.mul_(2)  # an in-place write into the input works, as under PyTorch's tracer
        for _ in range(steps):  # a long chain of tensor ops: followed back without recursion
            x = x + 1
        return x * self.scale, x.sum()


def test_add_graph_root_leaf_and_tensor_ops(tmp_path):
    with ctb.SummaryWriter(str(tmp_path)) as w:
        w.add_graph(cgrad.nn.Linear(3, 2), (cgrad.randn(4, 3),))
    g = {n.name: n for n in _acc(tmp_path).Graph().node}
    # the model itself is no node: its forward shows as the tensor ops it ran
    (op,) = set(g) - {"input/input", "Linear/weight", "Linear/bias", "output/output.1"}
    assert sorted(g[op].input) == ["Linear/bias", "Linear/weight", "input/input"]
    assert list(g["output/output.1"].input) == [op]
    with ctb.SummaryWriter(str(tmp_path / "b")) as w:
        w.add_graph(_InPlace(), [cgrad.randn(2, 3)])
    g = {n.name: n for n in _acc(tmp_path / "b").Graph().node}
    assert list(g["_InPlace/Mul"].input) == ["input/x"]  # the in-place x.mul_(2)
    assert list(g["_InPlace/Add"].input) == ["_InPlace/Mul"]
    assert list(g["output/output.1"].input) == ["_InPlace/Mul.2"]
    assert sorted(g["_InPlace/Mul.2"].input) == ["_InPlace/Add.3000", "_InPlace/scale"]
    assert list(g["output/output.2"].input) == ["_InPlace/Sum"]
    assert sum(n.op == "Add" for n in g.values()) == 3000


# --- the summary module --------------------------------------------------------------------------------

def test_summary_module_matches_torch(tmp_path):
    import torch.utils.tensorboard.summary as tsum
    import cgrad.utils.tensorboard.summary as csum
    rs = np.random.RandomState(7)
    img = rs.rand(2, 3, 6, 8).astype(np.float32)
    vals = rs.randn(200)
    labels, preds = rs.randint(0, 2, 50), rs.rand(50)

    def calls(w, T):
        S = csum if T is cgrad else tsum
        for s in S.hparams({"lr": 0.5, "opt": "sgd"}, {"m": 1.0}):
            w.file_writer.add_summary(s, 3)
        w.file_writer.add_summary(S.scalar("s", T.tensor(2.0), new_style=True), 1)
        w.file_writer.add_summary(S.image("img", T.tensor(img), rescale=0.5), 2)
        w.file_writer.add_summary(S.histogram("h", T.tensor(vals), "auto", max_bins=5), 4)
        w.file_writer.add_summary(S.pr_curve("pr", labels, preds, 20), 5)
        w.file_writer.add_summary(S.text("t", "hi"), 6)
    c, p = both(tmp_path, calls)
    ec = [e for e in events(c) if e.HasField("summary")]
    ep = [e for e in events(p) if e.HasField("summary")]
    assert len(ec) == len(ep) == 8
    for x, y in zip(ec, ep):
        if x.summary.value[0].HasField("image"):
            ix, iy = x.summary.value[0].image, y.summary.value[0].image
            assert (ix.height, ix.width, ix.colorspace) == (iy.height, iy.width, iy.colorspace) == (6, 16, 3)
            px = pixels(ix.encoded_image_string)
            assert px.shape == (3, 8, 3)
            np.testing.assert_array_equal(px, pixels(iy.encoded_image_string))
        elif x.summary.value[0].tag == "_hparams_/experiment":
            assert _hp_plugin(x) == _hp_plugin(y)
        else:
            assert x == y
    np.testing.assert_array_equal(csum.compute_curve(labels, preds, 300), tsum.compute_curve(labels, preds, 300))
    assert csum.make_histogram(vals, 10) == tsum.make_histogram(vals, 10)


def _hp_plugin(ev):
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
    return HParamsPluginData.FromString(ev.summary.value[0].metadata.plugin_data.content)
