/* count_records: an SSD App built outside Canopy with its SDK (find_package(Canopy),
 * canopy_spu_app). It filters records near the data: the host stores records in its region of
 * the SPU's store, then asks how many have a key, and the SPU reads them from the store and
 * counts, so only the count crosses PCIe. CR_CHECKSUM has the ring's CRC unit (the
 * crc_accelerator model) checksum a range: the store's bytes go by DMA straight into the request
 * to the unit, whose response carries the CRC. */
#include "count_records_abi.h"
#include "spu_app.h"

#define CHUNK_RECORDS 32u

static struct record chunk[CHUNK_RECORDS]; /* static memory only [Willow 3.1] */

static void store(const struct spu_rpc_header* h) {
    struct cr_store a;
    if (h->length < sizeof a || rpc_receive_bytes(&a, sizeof a) != SPU_OS_OK) {
        rpc_send_response(CR_ERROR | SPU_OS_E_BAD_ARG);
        return;
    }
    /* The records go from the request to the store by DMA; SPU-OS checks the process's rights. */
    const uint32_t r = rpc_receive_to_nvm(a.address, h->length - sizeof a);
    rpc_send_response(r == SPU_OS_OK ? 0 : (CR_ERROR | r));
}

static void count(const struct spu_rpc_header* h) {
    struct cr_count a;
    if (h->length != sizeof a || rpc_receive_bytes(&a, sizeof a) != SPU_OS_OK) {
        rpc_send_response(CR_ERROR | SPU_OS_E_BAD_ARG);
        return;
    }
    uint32_t matches = 0;
    for (uint32_t at = 0; at < a.records; at += CHUNK_RECORDS) {
        const uint32_t n = a.records - at < CHUNK_RECORDS ? a.records - at : CHUNK_RECORDS;
        const uint32_t r =
            nvm_read(a.address + at * sizeof(struct record), chunk, n * sizeof(struct record));
        if (r != SPU_OS_OK) {
            rpc_send_response(CR_ERROR | r);
            return;
        }
        for (uint32_t i = 0; i < n; ++i) matches += chunk[i].key == a.key;
    }
    rpc_send_response(matches);
}

static void checksum(const struct spu_rpc_header* h) {
    struct cr_checksum a;
    if (h->length != sizeof a || rpc_receive_bytes(&a, sizeof a) != SPU_OS_OK) {
        rpc_send_response(CR_ERROR | SPU_OS_E_BAD_ARG);
        return;
    }
    /* A synchronous RPC to the CRC unit, the payload straight from the store. An app's requests
     * carry its own app id (SPU-OS checks it): the one this request came in under. */
    const unsigned app = h->rpc_id >> 8;
    uint32_t r = rpc_start_request(a.crc_node, 0, SPU_OS_RPC_ID(app, 0), a.bytes);
    if (r == SPU_OS_OK) r = nvm_to_request(a.address, a.bytes);
    if (r == SPU_OS_OK) r = rpc_finish_request();
    if (r == SPU_OS_OK) r = rpc_wait_response(); /* the unit's result: the CRC */
    rpc_send_response(r);
}

SPU_APP(SPU_HANDLERS(store, count, checksum));
