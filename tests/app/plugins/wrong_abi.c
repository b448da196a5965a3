/* A library built against a host program ABI this Canopy does not run (version 999). */
#include <stdint.h>

__attribute__((visibility("default"))) const uint32_t canopy_host_abi_version = 999;

int canopy_host_main(void) { return 0; }
