#include "platform/register_maps.hpp"

#include "link/ctg_registers.hpp"
#include "link/dma_registers.hpp"
#include "ssd/flash_controller.hpp"
#include "ssd/ni_registers.hpp"
#include "ssd/pcie_bridge.hpp"
#include "ssd/spu_control.hpp"
#include "ssd/spu_dma.hpp"

namespace canopy::platform {

const std::vector<RegisterBlock>& register_blocks() {
    static const std::vector<RegisterBlock> blocks = {
        {"models/link/dma_registers.cpp", link::DmaRegisters::register_map},
        {"models/link/ctg_registers.cpp", link::CtgRegisters::register_map},
        {"models/ssd/spu_control.cpp", ssd::SpuControl::register_map},
        {"models/ssd/ni_registers.cpp", ssd::NiRegisters::register_map},
        {"models/ssd/spu_dma.cpp", ssd::SpuDma::register_map},
        {"models/ssd/pcie_bridge.cpp", ssd::PcieBridge::register_map},
        {"models/ssd/flash_controller.cpp", ssd::FlashController::register_map},
    };
    return blocks;
}

std::string header_name(const core::RegisterMap& map) { return map.block() + "_regs.h"; }

}  // namespace canopy::platform
