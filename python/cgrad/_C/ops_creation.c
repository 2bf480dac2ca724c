/* ops_creation.c — bindings of creation and random sampling (linspace, eye, rand, randn, Generator, ...)
 * as Tensor methods and module functions. */
#include "bind.h"

PyMethodDef cgpy_creation_methods[] = {CGPY_TABLE_END};
PyMethodDef cgpy_creation_functions[] = {CGPY_TABLE_END};
