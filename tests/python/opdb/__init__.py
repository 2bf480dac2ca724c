"""The adapter that runs PyTorch's own operator database (`op_db` of
torch.testing._internal.common_methods_invocations) against cgrad: each
OpInfo's sample inputs, converted to cgrad with the same dtypes, shapes,
strides and requires_grad, must give PyTorch's values, dtypes and shapes,
its gradients and second gradients, and raise where its error inputs raise.

  resolve.py       which OpInfos apply to cgrad, and the cgrad callable of each
  convert.py       torch values to cgrad values and back
  check.py         one OpInfo, run in the current process, to a result record
  server.py        the fork server: every OpInfo in a child process of its own
  expectations.py  the OpInfos cgrad does not pass yet, each with its reason

The namespaces other issues own (torch.linalg, torch.fft, torch.special,
complex dtypes) are marked by resolve.SCOPE; those issues move their ops into
scope and reuse the same checks."""
