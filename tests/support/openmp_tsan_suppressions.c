/* Linked into OpenMP programs that are not tests (the example) in the
 * ThreadSanitizer build only: see openmp_tsan.h. */
#include "openmp_tsan.h"
