// The DMA engine's BAR (models/link/dma_registers.hpp): a host thread programs descriptors by
// register writes over b_transport, the bytes arrive, status shows busy for exactly the engine's
// latency and done after it, errors and overruns show in status, the interrupt fires when
// enabled; and the map the C header and docs come from is the documented one. Each TEST runs in
// its own process.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <systemc>

#include "../temp_dir.hpp"
#include "core/services.hpp"
#include "device_fakes.hpp"
#include "link/dma_engine.hpp"
#include "link/dma_registers.hpp"

namespace canopy::link {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
using testing::FakeMemory;
using testing::ns;

constexpr uint64_t kHost = 0x1000'0000, kDev = 0x2000'0000;

// The documented layout (docs/registers.md), written out by hand rather than read from the map.
constexpr uint64_t kHostAddr = 0x00, kDeviceAddr = 0x08, kLength = 0x10, kControl = 0x14,
                   kStatus = 0x18, kErrorCode = 0x1C, kCompleted = 0x20, kBytesDone = 0x28,
                   kLastLatency = 0x30;
constexpr uint32_t kStart = 1, kDeviceToHost = 2, kTranslate = 4, kIrqEnable = 8;
constexpr uint32_t kBusy = 1, kDone = 2, kError = 4, kOverrun = 8;

// Latencies chosen so expected times are easy to work out: engine setup 50 ns (and 30 ns more to
// complete a host -> device read), host memory 100 ns and device memory 10 ns per access, 4 ns
// per register access; pieces store and forward, one after another.
constexpr double kSetupNs = 50, kReadDoneNs = 30, kHostNs = 100, kDevNs = 10, kRegNs = 4;

// A host CPU doing uncached MMIO: each access blocks until it completes (it syncs its delay).
struct Host : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Host> socket;
    std::function<void(Host&)> script;
    SC_HAS_PROCESS(Host);
    explicit Host(sc_core::sc_module_name n) : sc_module(n), socket("socket") { SC_THREAD(main); }
    void main() {
        if (script) script(*this);
    }
    tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t address, uint64_t& value,
                                    unsigned len) {
        uint8_t b[8];
        for (unsigned i = 0; i < 8; ++i) b[i] = uint8_t(value >> (8 * i));
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(address);
        gp.set_data_ptr(b);
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_time delay = SC_ZERO_TIME;
        socket->b_transport(gp, delay);
        wait(delay);
        value = 0;
        for (unsigned i = 0; i < len; ++i) value |= uint64_t(b[i]) << (8 * i);
        return gp.get_response_status();
    }
    void write(uint64_t address, uint64_t value, unsigned len = 4) {
        EXPECT_EQ(access(tlm::TLM_WRITE_COMMAND, address, value, len), tlm::TLM_OK_RESPONSE)
            << "write at " << address;
    }
    uint64_t read(uint64_t address, unsigned len = 4) {
        uint64_t v = 0;
        EXPECT_EQ(access(tlm::TLM_READ_COMMAND, address, v, len), tlm::TLM_OK_RESPONSE)
            << "read at " << address;
        return v;
    }
    void wait_until(const sc_time& t) {
        ASSERT_LE(sc_core::sc_time_stamp(), t);
        wait(t - sc_core::sc_time_stamp());
    }
    // Programs a descriptor; 64-bit addresses as two 32-bit halves, as 32-bit firmware would.
    void program(uint64_t host, uint64_t dev, uint32_t length) {
        write(kHostAddr, host, 8);
        write(kDeviceAddr, uint32_t(dev));
        write(kDeviceAddr + 4, dev >> 32);
        write(kLength, length);
    }
};

struct Bench {
    core::Services services;
    DmaEngine dma;
    DmaRegisters regs;
    FakeMemory host_mem, dev_mem;
    Host host;
    std::vector<sc_time> interrupts;

    explicit Bench(bool translate = false)
        : dma("dma", dma_config(translate), services),
          regs("regs", dma, services, regs_config()),
          host_mem("host_mem", kHost, 64 * 1024, kHostNs),
          dev_mem("dev_mem", kDev, 64 * 1024, kDevNs),
          host("host") {
        dma.host_initiator.bind(host_mem.socket);
        dma.device_initiator.bind(dev_mem.socket);
        host.socket.bind(regs.socket);
        regs.on_interrupt(
            [this](const DmaResult&) { interrupts.push_back(sc_core::sc_time_stamp()); });
    }
    static DmaConfig dma_config(bool translate) {
        DmaConfig c;
        c.setup_ns = kSetupNs;
        c.read_completion_ns = kReadDoneNs;
        c.pieces_in_flight = 1;
        c.translate = translate;
        return c;
    }
    static DmaRegistersConfig regs_config() {
        DmaRegistersConfig c;
        c.bank.access_ns = kRegNs;
        return c;
    }
    void run(std::function<void(Host&)> script) {
        host.script = std::move(script);
        sc_core::sc_start();
    }
    uint64_t counter(const char* module, const char* name) const {
        return static_cast<const core::Counter*>(services.stats.find(module, name))->value();
    }
};

TEST(LinkDmaRegisters, HostToDeviceCopyBusyThenDoneAtTheEngineLatency) {
    Bench b;
    // One piece (0x100 + 3000 stays inside the first 4 KiB page): setup + host read + device
    // write.
    const double latency = kSetupNs + kHostNs + kDevNs + kReadDoneNs;
    sc_time start_at, irq_seen;
    b.run([&](Host& h) {
        h.program(kHost + 0x100, kDev + 0x40, 3000);
        start_at = sc_core::sc_time_stamp() + sc_time(kRegNs, SC_NS);  // the write takes effect
        h.write(kControl, kStart | kIrqEnable);  // direction 0: host to device
        EXPECT_EQ(h.read(kStatus), kBusy);       // busy at once, done not yet
        const sc_time done_at = start_at + sc_time(latency, SC_NS);
        h.wait_until(done_at - sc_time(5, SC_NS));
        EXPECT_EQ(h.read(kStatus), kBusy) << "5 ns before the end";  // read at done - 5 ns
        h.wait_until(done_at + sc_time(1, SC_NS));
        EXPECT_EQ(h.read(kStatus), kDone) << "1 ns after the end";
        EXPECT_EQ(h.read(kErrorCode), 0u);
        EXPECT_EQ(h.read(kCompleted), 1u);
        EXPECT_EQ(h.read(kBytesDone, 8), 3000u);
        EXPECT_EQ(h.read(kLastLatency, 8), uint64_t(latency));
        h.write(kStatus, kDone);  // W1C
        EXPECT_EQ(h.read(kStatus), 0u);
    });
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev + 0x40), b.host_mem.at(kHost + 0x100), 3000));
    ASSERT_EQ(b.dma.results().size(), 1u);
    const DmaResult& r = b.dma.results()[0];
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_DOUBLE_EQ(r.latency_ns, latency);  // what the engine reports, worked out above
    EXPECT_EQ(r.completion, start_at + sc_time(latency, SC_NS));
    ASSERT_EQ(b.interrupts.size(), 1u);
    EXPECT_EQ(b.interrupts[0], start_at + sc_time(latency, SC_NS));
    EXPECT_EQ(b.counter("regs", "starts"), 1u);
    EXPECT_EQ(b.counter("regs", "interrupts"), 1u);
}

TEST(LinkDmaRegisters, DeviceToHostCopyAcrossAPageWithoutInterrupt) {
    Bench b;
    for (uint64_t i = 0; i < 0x300; ++i) *b.dev_mem.at(kDev + i) = uint8_t(0xA5 ^ i);
    // Host range 0x...F00 + 0x300 crosses a 4 KiB boundary: two pieces of device read + host
    // write.
    const double latency = kSetupNs + 2 * (kDevNs + kHostNs);
    sc_time start_at, done_seen;
    b.run([&](Host& h) {
        h.program(kHost + 0xF00, kDev, 0x300);
        start_at = sc_core::sc_time_stamp() + sc_time(kRegNs, SC_NS);
        h.write(kControl, kStart | kDeviceToHost);
        // Poll every 20 ns like a driver; each poll is a 4-ns read.
        while (!(h.read(kStatus) & kDone)) wait(20, SC_NS);
        done_seen = sc_core::sc_time_stamp();
        EXPECT_EQ(h.read(kControl), uint64_t(kDeviceToHost));  // start is not stored
    });
    EXPECT_EQ(0, std::memcmp(b.host_mem.at(kHost + 0xF00), b.dev_mem.at(kDev), 0x300));
    ASSERT_EQ(b.dma.results().size(), 1u);
    EXPECT_DOUBLE_EQ(b.dma.results()[0].latency_ns, latency);
    // The poll that saw done began at or after the end and less than one poll period later.
    const sc_time end = start_at + sc_time(latency, SC_NS);
    EXPECT_GE(done_seen - sc_time(kRegNs, SC_NS), end);
    EXPECT_LT(done_seen - sc_time(kRegNs, SC_NS), end + sc_time(20 + kRegNs, SC_NS));
    EXPECT_TRUE(b.interrupts.empty());  // irq_enable was 0
    EXPECT_EQ(b.counter("regs", "interrupts"), 0u);
}

TEST(LinkDmaRegisters, UnmappedAddressShowsAsTransferError) {
    Bench b;
    b.run([&](Host& h) {
        // Device memory ends at kDev + 64 KiB; the second page's piece falls outside it.
        h.program(kHost, kDev + 64 * 1024 - 4096, 8192);
        h.write(kControl, kStart | kIrqEnable);
        wait(10, sc_core::SC_US);
        EXPECT_EQ(h.read(kStatus), kDone | kError);
        EXPECT_EQ(h.read(kErrorCode), uint64_t(DmaErrorCode::Transfer));
        EXPECT_EQ(h.read(kBytesDone, 8), 4096u);  // the first page moved
        // A new start clears done and error; this one succeeds.
        h.program(kHost, kDev, 64);
        h.write(kControl, kStart);
        EXPECT_EQ(h.read(kStatus), kBusy);
        wait(10, sc_core::SC_US);
        EXPECT_EQ(h.read(kStatus), kDone);
        EXPECT_EQ(h.read(kErrorCode), 0u);
        EXPECT_EQ(h.read(kCompleted), 2u);
    });
    ASSERT_EQ(b.dma.results().size(), 2u);
    EXPECT_FALSE(b.dma.results()[0].ok);
    EXPECT_TRUE(b.dma.results()[1].ok);
    EXPECT_EQ(b.interrupts.size(), 1u);  // errors interrupt too; the second had irq_enable 0
}

TEST(LinkDmaRegisters, ZeroLengthIsRefusedWithoutTheEngine) {
    Bench b;
    sc_time start_at;
    b.run([&](Host& h) {
        h.program(kHost, kDev, 0);
        start_at = sc_core::sc_time_stamp() + sc_time(kRegNs, SC_NS);
        h.write(kControl, kStart | kIrqEnable);
        wait(1, SC_NS);
        EXPECT_EQ(h.read(kStatus), kDone | kError);
        EXPECT_EQ(h.read(kErrorCode), uint64_t(DmaErrorCode::ZeroLength));
        EXPECT_EQ(h.read(kLastLatency, 8), 0u);
    });
    EXPECT_TRUE(b.dma.results().empty());
    ASSERT_EQ(b.interrupts.size(), 1u);
    EXPECT_EQ(b.interrupts[0], start_at);  // refused at the start write's time
    EXPECT_EQ(b.counter("regs", "refused"), 1u);
}

TEST(LinkDmaRegisters, TranslateBitMustMatchTheEngine) {
    Bench b(false);  // physical addresses only
    b.run([&](Host& h) {
        h.program(kHost, kDev, 64);
        h.write(kControl, kStart | kTranslate);
        wait(1, SC_NS);
        EXPECT_EQ(h.read(kStatus), kDone | kError);
        EXPECT_EQ(h.read(kErrorCode), uint64_t(DmaErrorCode::TranslateMismatch));
    });
    EXPECT_TRUE(b.dma.results().empty());
    EXPECT_NE(b.regs.last_result().error.find("translate"), std::string::npos);
}

TEST(LinkDmaRegisters, StartWhileBusySetsOverrunAndIsIgnored) {
    Bench b;
    const double latency = kSetupNs + kHostNs + kDevNs + kReadDoneNs;
    sc_time start_at;
    b.run([&](Host& h) {
        h.program(kHost, kDev, 256);
        start_at = sc_core::sc_time_stamp() + sc_time(kRegNs, SC_NS);
        h.write(kControl, kStart);
        // Reprogram and start again during the transfer: ignored.
        h.write(kLength, 512);
        h.write(kControl, kStart | kDeviceToHost);
        EXPECT_EQ(h.read(kStatus), kBusy | kOverrun);
        h.wait_until(start_at + sc_time(latency + 1, SC_NS));
        EXPECT_EQ(h.read(kStatus), kDone | kOverrun);  // the first completed normally
        EXPECT_EQ(h.read(kCompleted), 1u);
        EXPECT_EQ(h.read(kBytesDone, 8), 256u);
        h.write(kStatus, kOverrun);  // W1C clears only overrun
        EXPECT_EQ(h.read(kStatus), kDone);
    });
    ASSERT_EQ(b.dma.results().size(), 1u);
    EXPECT_EQ(b.dma.results()[0].bytes_done, 256u);
    EXPECT_EQ(0, std::memcmp(b.dev_mem.at(kDev), b.host_mem.at(kHost), 256));
    EXPECT_EQ(b.counter("regs", "overruns"), 1u);
}

TEST(LinkDmaRegisters, BarRefusesWritesToReadOnlyRegisters) {
    Bench b;
    b.run([&](Host& h) {
        uint64_t v = 5;
        EXPECT_EQ(h.access(tlm::TLM_WRITE_COMMAND, kCompleted, v, 4),
                  tlm::TLM_COMMAND_ERROR_RESPONSE);
        EXPECT_EQ(h.access(tlm::TLM_READ_COMMAND, 0x38, v, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
        // busy is a read-only field: writing it does nothing, and starts nothing.
        h.write(kStatus, kBusy);
        EXPECT_EQ(h.read(kStatus), 0u);
    });
    EXPECT_TRUE(b.dma.results().empty());
    EXPECT_EQ(b.counter("regs.bank", "errors"), 2u);
}

TEST(LinkDmaRegisters, MapIsTheDocumentedLayout) {
    const core::RegisterMap m = DmaRegisters::register_map();
    EXPECT_EQ(m.block(), "dma");
    auto reg = [&](const char* name, uint64_t offset, unsigned width, core::Access access) {
        const core::Register* r = m.find(name);
        ASSERT_NE(r, nullptr) << name;
        EXPECT_EQ(r->offset, offset) << name;
        EXPECT_EQ(r->width_bits, width) << name;
        EXPECT_EQ(r->access, access) << name;
    };
    reg("host_addr", kHostAddr, 64, core::Access::RW);
    reg("device_addr", kDeviceAddr, 64, core::Access::RW);
    reg("length", kLength, 32, core::Access::RW);
    reg("control", kControl, 32, core::Access::RW);
    reg("status", kStatus, 32, core::Access::RW);
    reg("error_code", kErrorCode, 32, core::Access::RO);
    reg("completed", kCompleted, 32, core::Access::RO);
    reg("bytes_done", kBytesDone, 64, core::Access::RO);
    reg("last_latency_ns", kLastLatency, 64, core::Access::RO);
    EXPECT_EQ(m.registers().size(), 9u);
    const core::Register& control = *m.find("control");
    EXPECT_EQ(control.bits(core::Access::Trigger), kStart);
    EXPECT_EQ(control.field("direction")->mask(), kDeviceToHost);
    EXPECT_EQ(control.field("translate")->mask(), kTranslate);
    EXPECT_EQ(control.field("irq_enable")->mask(), kIrqEnable);
    const core::Register& status = *m.find("status");
    EXPECT_EQ(status.field("busy")->mask(), kBusy);
    EXPECT_EQ(status.bits(core::Access::W1C), kDone | kError | kOverrun);
}

// The header a host driver or firmware includes: compiles as C for the host and for rv32, and
// its macros are the documented values.
TEST(LinkDmaRegisters, CHeaderCompilesWithTheDocumentedValues) {
    canopy_test::TempDir dir;
    dir.write("dma_regs.h", DmaRegisters::register_map().c_header("models/link/dma_registers.cpp"));
    const std::string src =
        dir.write("check.c",
                  "#include \"dma_regs.h\"\n"
                  "_Static_assert(DMA_HOST_ADDR_OFFSET == 0x00, \"\");\n"
                  "_Static_assert(DMA_DEVICE_ADDR_OFFSET == 0x08, \"\");\n"
                  "_Static_assert(DMA_LENGTH_OFFSET == 0x10, \"\");\n"
                  "_Static_assert(DMA_CONTROL_OFFSET == 0x14, \"\");\n"
                  "_Static_assert(DMA_STATUS_OFFSET == 0x18, \"\");\n"
                  "_Static_assert(DMA_ERROR_CODE_OFFSET == 0x1C, \"\");\n"
                  "_Static_assert(DMA_COMPLETED_OFFSET == 0x20, \"\");\n"
                  "_Static_assert(DMA_BYTES_DONE_OFFSET == 0x28, \"\");\n"
                  "_Static_assert(DMA_LAST_LATENCY_NS_OFFSET == 0x30, \"\");\n"
                  "_Static_assert(DMA_SIZE == 0x38, \"\");\n"
                  "_Static_assert(DMA_CONTROL_START_MASK == 1, \"\");\n"
                  "_Static_assert(DMA_CONTROL_DIRECTION_SHIFT == 1, \"\");\n"
                  "_Static_assert(DMA_CONTROL_DIRECTION_DEVICE_TO_HOST == 1, \"\");\n"
                  "_Static_assert(DMA_CONTROL_TRANSLATE_MASK == 4, \"\");\n"
                  "_Static_assert(DMA_CONTROL_IRQ_ENABLE_MASK == 8, \"\");\n"
                  "_Static_assert(DMA_STATUS_BUSY_MASK == 1, \"\");\n"
                  "_Static_assert(DMA_STATUS_DONE_MASK == 2, \"\");\n"
                  "_Static_assert(DMA_STATUS_ERROR_MASK == 4, \"\");\n"
                  "_Static_assert(DMA_STATUS_OVERRUN_MASK == 8, \"\");\n"
                  "_Static_assert(DMA_ERROR_CODE_CODE_TRANSFER == 3, \"\");\n"
                  "_Static_assert(DMA_ERROR_CODE_CODE_ZERO_LENGTH == 1, \"\");\n");
    int compiled = 0;
    for (const char* cc : {"cc", "riscv64-unknown-elf-gcc"}) {
        if (std::system((std::string("command -v ") + cc + " >/dev/null 2>&1").c_str()) != 0)
            continue;
        const std::string flags = std::string(cc) == "cc" ? "" : "-march=rv32im_zicsr -mabi=ilp32";
        const std::string log = dir.file("cc.log");
        const std::string cmd = std::string(cc) + " " + flags +
                                " -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I" +
                                dir.path().string() + " " + src + " >" + log + " 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << canopy_test::read_text(log);
        ++compiled;
    }
    if (compiled == 0) GTEST_SKIP() << "no C compiler";
}

// docs/registers.md carries the generated table; it must be what the map generates today.
TEST(LinkDmaRegisters, DocsShowTheCurrentMap) {
    const std::string docs =
        canopy_test::read_text(std::string(CANOPY_SOURCE_DIR) + "/docs/registers.md");
    const std::string table = DmaRegisters::register_map().markdown();
    EXPECT_NE(docs.find(table), std::string::npos)
        << "docs/registers.md is out of date; the DMA section should read:\n"
        << table;
}

}  // namespace
}  // namespace canopy::link
