"""cgrad.utils.tensorboard: write TensorBoard event files (the counterpart of
torch.utils.tensorboard). Needs the optional `tensorboard` package, whose
protocol buffers and EventFileWriter do the encoding and the file writing."""
try:
    import tensorboard as _tensorboard
    from tensorboard.summary.writer.event_file_writer import EventFileWriter as _EventFileWriter  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "cgrad.utils.tensorboard needs the tensorboard package, which is not installed: "
        "pip install tensorboard (or pip install 'cgrad[tensorboard]')"
    ) from _err

from tensorboard.summary.writer.record_writer import RecordWriter

from .writer import FileWriter, SummaryWriter

del _tensorboard

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
