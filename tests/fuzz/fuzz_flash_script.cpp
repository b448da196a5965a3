// A NAND command script (scenarios/flash_script.cpp, `canopy flash --script`) on the Table 1
// geometry; data=file: names resolve in a directory that does not exist.
#include "fuzz.hpp"
#include "nand/config.hpp"
#include "scenarios/flash_script.hpp"

using namespace canopy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const nand::Geometry geometry;
    fuzz::refused_only_as_input_error([&] {
        scenarios::parse_flash_script_text(fuzz::text(data, size), "fuzz.fcs", "/nonexistent",
                                           geometry);
    });
    return 0;
}
