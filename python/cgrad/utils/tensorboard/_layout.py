"""The custom_scalars plugin's layout summary (add_custom_scalars and the
multiline / margin chart helpers)."""
from __future__ import annotations

from typing import Any, Dict

from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2


def custom_scalars(layout: Dict[str, Dict[str, Any]]) -> Summary:
    """`layout` maps a category title to {chart title: [kind, tags]}, kind
    'Multiline' (any tags, or regexes) or 'Margin' (value, lower, upper)."""
    if not isinstance(layout, dict):
        raise TypeError(f"add_custom_scalars: layout must be a dict, not {type(layout).__name__}")
    categories = []
    for cat, charts in layout.items():
        if not isinstance(charts, dict):
            raise TypeError(f"add_custom_scalars: layout[{cat!r}] must be a dict of charts")
        built = []
        for title, spec in charts.items():
            if not isinstance(spec, (list, tuple)) or len(spec) != 2:
                raise ValueError(f"add_custom_scalars: layout[{cat!r}][{title!r}] must be [kind, tags]")
            kind, tags = spec
            tags = list(tags)
            if kind == "Margin":
                if len(tags) != 3:
                    raise ValueError(f"add_custom_scalars: the Margin chart {title!r} needs 3 tags "
                                     f"(value, lower, upper), got {len(tags)}")
                margin = layout_pb2.MarginChartContent(series=[layout_pb2.MarginChartContent.Series(
                    value=tags[0], lower=tags[1], upper=tags[2])])
                built.append(layout_pb2.Chart(title=title, margin=margin))
            else:
                built.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=cat, chart=built))
    proto = TensorProto(dtype="DT_STRING", tensor_shape=TensorShapeProto(),
                        string_val=[layout_pb2.Layout(category=categories).SerializeToString()])
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto, metadata=md)])
