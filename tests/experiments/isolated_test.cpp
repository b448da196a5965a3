// run_isolated: each configuration of an experiment elaborates in a child process of its own.
#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

#include "core/error.hpp"
#include "experiments/isolated.hpp"

namespace canopy::experiments {
namespace {

struct Ticker : sc_core::sc_module {
    int ticks = 0;
    SC_HAS_PROCESS(Ticker);
    explicit Ticker(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
    void run() {
        for (int i = 0; i < 5; ++i) {
            wait(10, sc_core::SC_NS);
            ++ticks;
        }
    }
};

TEST(Isolated, EachChildElaboratesAndSimulatesItsOwnPlatform) {
    for (int round = 0; round < 2; ++round) {  // twice "Ticker": only fresh kernels allow it
        auto j = run_isolated([] {
            Ticker t("ticker");
            sc_core::sc_start();
            return nlohmann::json{{"ticks", t.ticks},
                                  {"ns", sc_core::sc_time_stamp().to_seconds() * 1e9}};
        });
        EXPECT_EQ(j["ticks"], 5);
        EXPECT_DOUBLE_EQ(j["ns"].get<double>(), 50.0);
    }
}

TEST(Isolated, AnExceptionInTheChildComesBackWithItsMessage) {
    try {
        run_isolated([]() -> nlohmann::json { throw std::invalid_argument("bad profile xyz"); });
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("bad profile xyz"), std::string::npos);
    }
}

// Thrown with a platform half elaborated (modules, their processes and events standing): the
// message still comes back, rather than the child dying in the modules' destructors.
TEST(Isolated, AnExceptionDuringElaborationComesBackWithItsMessage) {
    try {
        run_isolated([]() -> nlohmann::json {
            Ticker a("a");
            sc_core::sc_event e("e");
            Ticker b("b");
            throw std::invalid_argument("no such channel 9");
        });
        FAIL();
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("no such channel 9"), std::string::npos) << e.what();
    }
}

// The user's input was wrong, not the program: canopy reports it as such (status 2), so it must
// not come back as an internal error.
TEST(Isolated, AnInputErrorInTheChildComesBackAsItself) {
    try {
        run_isolated([]() -> nlohmann::json {
            throw InputError("config", "ssd.store.flash", "needs a NAND channel per SPU");
        });
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.input(), "config");
        EXPECT_EQ(e.place(), "ssd.store.flash");
        EXPECT_EQ(e.message(), "needs a NAND channel per SPU");
    }
}

TEST(Isolated, AChildThatDiesIsAnError) {
    EXPECT_THROW(run_isolated([]() -> nlohmann::json { std::_Exit(3); }), std::runtime_error);
}

}  // namespace
}  // namespace canopy::experiments
