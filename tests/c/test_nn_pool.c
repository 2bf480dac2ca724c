/* test_nn_pool.c */
#include "test.h"
