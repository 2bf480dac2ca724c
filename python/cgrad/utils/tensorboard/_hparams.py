"""The three summaries of the hparams plugin that add_hparams writes: the
experiment (hyperparameter and metric names), the session start (the values)
and the session end (status success)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import api_pb2, metadata as hp_metadata
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

from ._convert import _is_cgrad_tensor


def _wrap(tag: str, content: HParamsPluginData) -> Summary:
    content.version = hp_metadata.PLUGIN_DATA_VERSION
    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=hp_metadata.PLUGIN_NAME, content=content.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=md)])


def _kind(v: Any) -> Optional[str]:
    # bool counts as a number, as in PyTorch (isinstance(True, int) is checked first)
    if isinstance(v, (int, float, np.integer, np.floating, np.bool_)):
        return "number"
    if isinstance(v, str):
        return "string"
    return None


def hparams(hparam_dict: Dict[str, Any], metric_dict: Dict[str, Any],
            hparam_domain_discrete: Optional[Dict[str, list]] = None) -> Tuple[Summary, Summary, Summary]:
    """Return the (experiment, session start, session end) summaries."""
    if not isinstance(hparam_dict, dict):
        raise TypeError(f"add_hparams: hparam_dict must be a dict, not {type(hparam_dict).__name__}")
    if not isinstance(metric_dict, dict):
        raise TypeError(f"add_hparams: metric_dict must be a dict, not {type(metric_dict).__name__}")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError(f"add_hparams: hparam_domain_discrete must be a dict, not {type(domains).__name__}")
    for k, vals in domains.items():
        if k not in hparam_dict or not isinstance(vals, list) or \
                not all(isinstance(d, type(hparam_dict[k])) for d in vals):
            raise TypeError(f"add_hparams: hparam_domain_discrete[{k!r}] must be a list of values of the "
                            f"type of hparam_dict[{k!r}]")
    start = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if _is_cgrad_tensor(v):
            if v.numel() != 1:
                raise ValueError(f"add_hparams: hparam_dict[{k!r}] is a tensor of {v.numel()} elements, not one")
            v = float(v.item())
            domains_k = None
        else:
            domains_k = domains.get(k)
        kind = _kind(v)
        if kind is None:
            raise ValueError(f"add_hparams: hparam_dict[{k!r}] must be an int, float, str, bool or a "
                             f"one-element tensor, not {type(v).__name__}")
        domain = None
        if kind == "number":
            start.hparams[k].number_value = float(v)
            if domains_k is not None:
                domain = struct_pb2.ListValue(values=[struct_pb2.Value(number_value=d) for d in domains_k])
            dtype = "DATA_TYPE_FLOAT64"
        else:
            start.hparams[k].string_value = v
            if domains_k is not None:
                domain = struct_pb2.ListValue(values=[struct_pb2.Value(string_value=d) for d in domains_k])
            dtype = "DATA_TYPE_STRING"
        infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(dtype), domain_discrete=domain))
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    exp = _wrap(hp_metadata.EXPERIMENT_TAG, HParamsPluginData(
        experiment=api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)))
    ssi = _wrap(hp_metadata.SESSION_START_INFO_TAG, HParamsPluginData(session_start_info=start))
    sei = _wrap(hp_metadata.SESSION_END_INFO_TAG, HParamsPluginData(
        session_end_info=SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))))
    return exp, ssi, sei
