// `cmake --install` (`make install PREFIX=...`; issue #30, "Install and relocate"): the installed
// canopy boots the firmware installed beside it, found from its own path, never the build tree's;
// a host program built against the installed header alone runs on it; a lone copy of the binary
// finds no firmware and says where it looked.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../canopy_process.hpp"

namespace {

using canopy_test::run_program;
using canopy_test::scratch;

#ifdef CANOPY_FIRMWARE_DIR
TEST(Install, TheInstalledBinaryBootsTheFirmwareInstalledBesideIt) {
    namespace fs = std::filesystem;
    const std::string d = scratch("install");
    const std::string prefix = d + "/prefix";
    auto install = run_program(
        "cmake", std::string("--install ") + CANOPY_BINARY_DIR + " --prefix " + prefix, d);
    ASSERT_EQ(install.status, 0) << install.out << install.err;
    const std::string bin = prefix + "/bin/canopy", fw = prefix + "/share/canopy/firmware";
    ASSERT_TRUE(fs::is_regular_file(bin));
    for (const char* elf : {"spu_os.elf", "app_base_io.elf", "app_direct_io.elf"})
        EXPECT_TRUE(fs::is_regular_file(fw + "/" + elf)) << elf;

    // Its default is the installed firmware, and the default scenario boots it (Willow runs).
    auto dump = run_program(bin, "config --dump", d);
    ASSERT_EQ(dump.status, 0) << dump.err;
    EXPECT_NE(dump.out.find("scenario.firmware_dir"), std::string::npos) << dump.out;
    EXPECT_NE(dump.out.find(fw), std::string::npos) << dump.out;
    EXPECT_EQ(dump.out.find(CANOPY_FIRMWARE_DIR), std::string::npos) << dump.out;
    auto run = run_program(bin, std::string("run --out ") + d + "/out " + canopy_test::kSmall, d);
    EXPECT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("Willow: SPU-OS on 2 SPUs"), std::string::npos) << run.out;

    // The public header is installed, and a host program built against it alone (the C
    // compiler, the install's include directory, nothing of the build tree) runs on it.
    const std::string include = prefix + "/include";
    ASSERT_TRUE(fs::is_regular_file(include + "/canopy/host_program.h"));
    auto cc = run_program("cc",
                          "-shared -fPIC -Wall -Werror -I " + include + " -o " + d +
                              "/memcheck.so " + canopy_test::source("tests/app/plugins/memcheck.c"),
                          d);
    ASSERT_EQ(cc.status, 0) << cc.out << cc.err;
    auto own = run_program(bin,
                           std::string("run --out ") + d + "/out3 " + canopy_test::kSmall +
                               " --set host.cores=5 --host-program 4=" + d +
                               "/memcheck.so --host-arg 8192",
                           d);
    EXPECT_EQ(own.status, 0) << own.out << own.err;
    EXPECT_NE(own.out.find("host.core4: checked 8192 bytes, 0 wrong"), std::string::npos)
        << own.out;

    // Moved away from its firmware, the binary finds none: Willow is skipped, saying where it
    // looked; it never falls back on the build tree's.
    fs::create_directories(d + "/lone");
    fs::copy_file(bin, d + "/lone/canopy");
    auto lone = run_program(d + "/lone/canopy",
                            std::string("run --out ") + d + "/out2 " + canopy_test::kSmall, d);
    EXPECT_EQ(lone.status, 0) << lone.err;
    EXPECT_NE(lone.out.find("Willow: skipped: no SPU firmware beside this binary"),
              std::string::npos)
        << lone.out;
    EXPECT_NE(lone.out.find(d + "/lone/firmware"), std::string::npos) << lone.out;
}
#endif

}  // namespace
