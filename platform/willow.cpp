#include "platform/willow.hpp"

#include "core/error.hpp"

namespace canopy::platform {

void WillowConfig::describe(core::Params& root) {
    core::Params p = root.scope("ssd");
    p("spus", spus, "", "storage processing units on the ring [Willow 3.2: 8]", 1, 64)(
        "firmware", firmware, "ELF every SPU boots (SPU-OS); empty: none, the SPUs stay halted");
    core::Params s = p.scope("spu");
    spu.describe(s);
    core::Params n = p.scope("ni");
    ni.describe(n);
    core::Params r = p.scope("ring");
    ring.describe(r);
    core::Params d = p.scope("dram");
    dram.describe(d);
    core::Params b = p.scope("bridge");
    bridge.describe(b);
    core::Params bn = b.scope("ni");
    bridge_ni.describe(bn);
    core::Params f = p.scope("flash");
    flash.describe(f);
    core::Params st = p.scope("store");
    store.describe(st);
}

ssd::NiConfig WillowConfig::default_bridge_ni() {
    ssd::NiConfig c;
    c.response_slots = 256;
    c.rx_buffer_bytes = 256 * 1024;
    return c;
}

Willow::Willow(sc_core::sc_module_name name, const WillowConfig& cfg, core::Services& services,
               std::ostream& console_transcript, bool with_bridge, const nand::NandConfig* nand)
    : sc_module(name),
      ring("ring", cfg.ring, services),
      dram("dram", cfg.dram, services),
      dram_port("dram_port") {
    if (cfg.dram.banks < cfg.spus)
        throw InputError("config", "ssd.dram.banks",
                         "fewer banks (" + std::to_string(cfg.dram.banks) + ") than SPUs (" +
                             std::to_string(cfg.spus) + "): each SPU needs its local store");
    const unsigned channels = nand ? std::min(nand->geometry.channels, cfg.spus) : 0;
    for (unsigned i = 0; i < cfg.spus; ++i) {
        spus.push_back(std::make_unique<Spu>(
            ("spu" + std::to_string(i)).c_str(), i, cfg.spus, cfg.spu, cfg.ni, dram.size(),
            ssd::LocalStore{i * dram.bank_bytes(), dram.bank_bytes()}, services, console_transcript,
            i < channels));
        Spu& s = *spus.back();
        ring.attach(ssd::NodeId(i), s.ni);
        s.dma.dram.bind(dram_port.in);
        if (i >= channels) continue;
        flash.push_back(std::make_unique<ssd::FlashController>(
            ("flash" + std::to_string(i)).c_str(), i, *nand, services, cfg.flash));
        ssd::FlashController& fc = *flash.back();
        s.flash_port().bind(fc.socket);
        fc.dram.bind(dram_port.in);
        fc.on_irq([&s](bool level, const sc_core::sc_time& at) {
            s.ctl.set_irq(ssd::SpuIrq::FlashDone, level, at);
        });
        s.ctl.counter_source("perf_flash_bytes", [&fc] { return fc.bytes_moved(); });
    }
    dram_port.out.bind(dram.socket);
    if (!cfg.firmware.empty())
        load_all(cfg.firmware);
    else
        for (auto& s : spus) s->core.halt();
    if (with_bridge) {
        bridge_ni = std::make_unique<ssd::NetworkInterface>("bridge_ni", cfg.bridge_ni, services);
        bridge = std::make_unique<ssd::PcieBridge>("bridge", *bridge_ni, services, cfg.bridge);
        ring.attach(ssd::NodeId(cfg.spus), *bridge_ni);
    }
}

void Willow::load_all(const std::string& elf_path) {
    for (auto& s : spus) {
        cpu::ElfImage image(elf_path);
        s->load(image);
        if (s->core.halted()) s->core.resume();  // an SSD built without firmware waits halted
    }
}

bool Willow::all_exited() const {
    for (const auto& s : spus)
        if (!s->exited()) return false;
    return true;
}

}  // namespace canopy::platform
