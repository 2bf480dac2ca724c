/* ops_index.c — bindings of indexing ops (gather, scatter, index_select, masked_*, ...)
 * as Tensor methods and module functions. */
#include "bind.h"

PyMethodDef cgpy_index_methods[] = {CGPY_TABLE_END};
PyMethodDef cgpy_index_functions[] = {CGPY_TABLE_END};
