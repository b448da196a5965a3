/* A host program built against version 1 of the host program ABI (before the ssd_ calls): a
 * later Canopy still runs it, since the table only grows at its end. */
#include <stdint.h>

struct v1_api { /* the first members of canopy_host_api version 1 */
    uint32_t abi_version, size;
    void* calls[13]; /* load .. map_device */
    void (*print)(void* core, const char* line);
};

__attribute__((visibility("default"))) const uint32_t canopy_host_abi_version = 1;

int canopy_host_main(const struct v1_api* api, void* core, int argc, const char* const* argv) {
    (void)argc, (void)argv;
    api->print(core, "a version 1 program");
    return 0;
}
