#include "core/user_files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.hpp"

namespace canopy::core {

namespace {

std::string size_text(uint64_t bytes) {
    if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
    if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes) + " bytes";
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        throw InputError(path, "", std::string("cannot open for reading: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(path, "", "is a directory, not " + what);
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        throw InputError(
            path, "",
            "is not a regular file (a device or socket); " + what + " is read from a file");
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
    check_input_file(path, what);
    errno = 0;
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f)
        throw InputError(path, "", std::string("cannot open for reading: ") + std::strerror(errno));
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
        if (text.size() + n > max_bytes)
            throw InputError(
                path, "", "larger than " + size_text(max_bytes) + ", the most " + what + " may be");
        text.append(buf, n);
    }
    if (std::ferror(f.get()))
        throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
    return text;
}

void prepare_output_dir(const std::string& dir, const std::string& option) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(option, dir, "cannot create the directory: " + ec.message());
    const std::string probe = dir + "/.canopy-write-check";
    errno = 0;
    std::FILE* f = std::fopen(probe.c_str(), "w");
    if (!f)
        throw InputError(option, dir, std::string("cannot write there: ") + std::strerror(errno));
    std::fclose(f);
    std::remove(probe.c_str());
}

}  // namespace canopy::core
