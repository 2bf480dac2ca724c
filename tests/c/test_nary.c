/* test_nary.c */
#include "opcheck.h"
