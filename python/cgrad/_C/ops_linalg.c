/* ops_linalg.c — bindings of linear algebra (matmul, mm, bmm, einsum, ...)
 * as Tensor methods and module functions. */
#include "bind.h"

PyMethodDef cgpy_linalg_methods[] = {CGPY_TABLE_END};
PyMethodDef cgpy_linalg_functions[] = {CGPY_TABLE_END};
