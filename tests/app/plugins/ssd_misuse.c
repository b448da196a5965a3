/* A host program misusing the Willow SSD calls, as argv[1] says: "spu" sends to an SPU the SSD
 * does not have, "tag" waits for a response to a tag never sent. Each is a fault. */
#include <string.h>

#include <canopy/host_program.h>

CANOPY_HOST_PROGRAM_ABI();

int canopy_host_main(const canopy_host_api* api, canopy_host* core, int argc,
                     const char* const* argv) {
    uint32_t result = 0;
    if (argc > 1 && strcmp(argv[1], "spu") == 0)
        api->ssd_send(core, 99, api->ssd_app(core, "base-io"), 0, NULL, 0);
    if (argc > 1 && strcmp(argv[1], "tag") == 0) api->ssd_wait(core, 12345, &result);
    api->print(core, "not reached");
    return 0;
}
