// Headless Chromium for the web tests, driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
// the browser reads commands on fd 3 and writes answers and events on fd 4, each a JSON text ended by NUL).
// Also: a PNG decoder (to tell a screenshot from a blank page) and `ftbound serve` as a child process.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "spec/document.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

extern char** environ;

namespace browser_test {

using ftb::Json;

// The browser the setup script installs (Debian's chromium); FTBOUND_CHROMIUM names another.
inline std::string chromium_path() {
    const char* env = std::getenv("FTBOUND_CHROMIUM");
    return env && *env ? env : "/usr/bin/chromium";
}

// A file descriptor moved above the standard ones and fds 3-4 (which the child's copies take).
inline int high_fd(int fd) {
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return h;
}

inline pid_t spawn(const std::vector<std::string>& args, posix_spawn_file_actions_t* actions) {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, argv[0], actions, nullptr, argv.data(), environ) != 0) return -1;
    return pid;
}

// Waits up to `seconds` for the child; kills it when it does not end. Returns the wait status, or -1.
inline int reap(pid_t pid, double seconds) {
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        if (r < 0) return -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

class Chromium {
public:
    Chromium() {
        dir_ = spec_test::scratch_dir() + "/chromium-" + std::to_string(counter()++);
        std::filesystem::create_directories(dir_ + "/profile");
        const std::string exe = chromium_path();
        if (access(exe.c_str(), X_OK) != 0)
            throw std::runtime_error(exe + " not found: scripts/setup.sh installs Debian's chromium for these tests");
        int to_browser[2], from_browser[2];
        if (pipe(to_browser) != 0 || pipe(from_browser) != 0) throw std::runtime_error("pipe failed");
        const int browser_reads = high_fd(to_browser[0]), browser_writes = high_fd(from_browser[1]);
        write_fd_ = high_fd(to_browser[1]);
        read_fd_ = high_fd(from_browser[0]);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, browser_reads, 3);
        posix_spawn_file_actions_adddup2(&fa, browser_writes, 4);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, log_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        // The flags the project's machines need: no sandbox (root in CI), no GPU, and none of the browser's own
        // network traffic (background updates, sync), which a closed network refuses.
        pid_ = spawn({exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync",
                      "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--window-size=1280,900",
                      "--user-data-dir=" + dir_ + "/profile", "--remote-debugging-pipe", "about:blank"},
                     &fa);
        posix_spawn_file_actions_destroy(&fa);
        close(browser_reads);
        close(browser_writes);
        if (pid_ < 0) throw std::runtime_error("could not start " + exe);
    }
    ~Chromium() {
        if (pid_ > 0) {
            try {
                send("Browser.close", Json::object(), "");
            } catch (...) {
            }
            close(write_fd_);
            reap(pid_, 10);
        }
        close(read_fd_);
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    Chromium(const Chromium&) = delete;
    Chromium& operator=(const Chromium&) = delete;

    // One command; its result, or a runtime_error with the browser's error or log.
    Json call(const std::string& method, const Json& params, const std::string& session, double timeout_s = 60) {
        const int id = send(method, params, session);
        const auto end = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
        for (;;) {
            Json m = next(end, method);
            if (m.contains("id") && m["id"] == id) {
                if (m.contains("error")) throw std::runtime_error(method + ": " + m["error"].dump());
                return m.value("result", Json::object());
            }
            if (m.contains("method")) events_.push_back(std::move(m));
        }
    }
    // Waits for an event (by method, in the session); events seen before count.
    Json wait_event(const std::string& method, const std::string& session, double timeout_s = 60) {
        const auto end = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
        for (size_t i = 0;; ++i) {
            while (i >= events_.size()) events_.push_back(next(end, method));
            if (events_[i].value("method", "") == method && events_[i].value("sessionId", "") == session) return events_[i];
        }
    }
    const std::vector<Json>& events() const { return events_; }
    std::string log() const { return spec_test::slurp(log_path()); }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    std::string log_path() const { return dir_ + "/chromium.log"; }
    int send(const std::string& method, const Json& params, const std::string& session) {
        Json m = {{"id", ++last_id_}, {"method", method}, {"params", params}};
        if (!session.empty()) m["sessionId"] = session;
        const std::string text = m.dump() + std::string(1, '\0');
        for (size_t done = 0; done < text.size();) {
            const ssize_t n = write(write_fd_, text.data() + done, text.size() - done);
            if (n <= 0) throw std::runtime_error("the browser closed its pipe; its log:\n" + log());
            done += size_t(n);
        }
        return last_id_;
    }
    Json next(std::chrono::steady_clock::time_point end, const std::string& waiting_for) {
        for (;;) {
            const size_t nul = buffer_.find('\0');
            if (nul != std::string::npos) {
                Json m = Json::parse(buffer_.substr(0, nul));
                buffer_.erase(0, nul + 1);
                return m;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            pollfd p{read_fd_, POLLIN, 0};
            if (left.count() <= 0 || poll(&p, 1, int(left.count())) <= 0)
                throw std::runtime_error("no answer from the browser to " + waiting_for + "; its log:\n" + log());
            char chunk[65536];
            const ssize_t n = read(read_fd_, chunk, sizeof chunk);
            if (n <= 0) throw std::runtime_error("the browser ended; its log:\n" + log());
            buffer_.append(chunk, size_t(n));
        }
    }
    std::string dir_;
    pid_t pid_ = -1;
    int write_fd_ = -1, read_fd_ = -1, last_id_ = 0;
    std::string buffer_;
    std::vector<Json> events_;
};

// One tab.
class Page {
public:
    // Opens `url` in a new tab and waits for its load event. Console errors, uncaught exceptions and every
    // network request are recorded.
    Page(Chromium& browser, const std::string& url) : b_(browser) {
        const std::string target = b_.call("Target.createTarget", {{"url", "about:blank"}}, "")["targetId"];
        session_ = b_.call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}}, "")["sessionId"];
        for (const char* domain : {"Page.enable", "Runtime.enable", "Network.enable", "Log.enable"})
            b_.call(domain, Json::object(), session_);
        b_.call("Page.navigate", {{"url", url}}, session_);
        b_.wait_event("Page.loadEventFired", session_);
    }
    // Evaluates `js` (awaiting a promise) and returns its value.
    Json eval(const std::string& js) {
        Json r = b_.call("Runtime.evaluate", {{"expression", js}, {"awaitPromise", true}, {"returnByValue", true}}, session_);
        if (r.contains("exceptionDetails")) throw std::runtime_error("page script failed: " + r["exceptionDetails"].dump());
        return r["result"].value("value", Json());
    }
    // Resolves once `condition` (a JS expression) is true, or throws after `timeout_ms`.
    Json wait_for(const std::string& condition, int timeout_ms = 30000) {
        return eval("new Promise((resolve, reject) => { const t0 = Date.now(); (function poll() { let v; try { v = (" +
                    condition + "); } catch (e) {} if (v) return resolve(v); if (Date.now() - t0 > " +
                    std::to_string(timeout_ms) + ") return reject(new Error('timed out waiting for: ' + " +
                    Json(condition).dump() + ")); setTimeout(poll, 50); })(); })");
    }
    std::string screenshot_png() {
        const std::string b64 = b_.call("Page.captureScreenshot", {{"format", "png"}}, session_)["data"];
        return base64_decode(b64);
    }
    // What went wrong on the page: uncaught exceptions, console errors, log errors (e.g. refused loads).
    std::vector<std::string> problems() const {
        std::vector<std::string> out;
        for (const auto& e : b_.events()) {
            if (e.value("sessionId", "") != session_) continue;
            const std::string m = e.value("method", "");
            if (m == "Runtime.exceptionThrown") out.push_back(e["params"]["exceptionDetails"].dump());
            if (m == "Runtime.consoleAPICalled" && e["params"].value("type", "") == "error") out.push_back(e["params"].dump());
            // Log errors from the "network" source are HTTP error statuses the page asked for (an API's 400).
            if (m == "Log.entryAdded" && e["params"]["entry"].value("level", "") == "error" &&
                e["params"]["entry"].value("source", "") != "network")
                out.push_back(e["params"]["entry"].dump());
        }
        return out;
    }
    // The URLs the page asked the network for.
    std::vector<std::string> requests() const {
        std::vector<std::string> out;
        for (const auto& e : b_.events())
            if (e.value("sessionId", "") == session_ && e.value("method", "") == "Network.requestWillBeSent")
                out.push_back(e["params"]["request"].value("url", ""));
        return out;
    }

    static std::string base64_decode(const std::string& in) {
        static const std::string chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        std::string out;
        uint32_t acc = 0;
        int bits = 0;
        for (char c : in) {
            const size_t v = chars.find(c);
            if (v == std::string::npos) continue;   // '=' padding, newlines
            acc = (acc << 6) | uint32_t(v);
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out.push_back(char((acc >> bits) & 0xff));
            }
        }
        return out;
    }

private:
    Chromium& b_;
    std::string session_;
};

// An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes), decoded to RGBA.
struct Image {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

inline uint32_t be32(const std::string& s, size_t at) {
    return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
           uint32_t(uint8_t(s[at + 3]));
}

inline Image decode_png(const std::string& png) {
    if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) throw std::runtime_error("not a PNG");
    Image img;
    int channels = 0;
    std::string idat;
    for (size_t at = 8; at + 8 <= png.size();) {
        const uint32_t len = be32(png, at);
        const std::string type = png.substr(at + 4, 4);
        if (at + 12 + len > png.size()) throw std::runtime_error("truncated PNG");
        if (type == "IHDR") {
            img.width = be32(png, at + 8);
            img.height = be32(png, at + 12);
            const int depth = uint8_t(png[at + 16]), color = uint8_t(png[at + 17]), interlace = uint8_t(png[at + 20]);
            if (depth != 8 || (color != 2 && color != 6) || interlace != 0) throw std::runtime_error("unsupported PNG");
            channels = color == 6 ? 4 : 3;
        } else if (type == "IDAT") {
            idat += png.substr(at + 8, len);
        }
        at += 12 + len;
    }
    const size_t stride = size_t(img.width) * size_t(channels);
    std::vector<uint8_t> raw(size_t(img.height) * (stride + 1));
    uLongf raw_len = raw.size();
    if (channels == 0 || uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
        raw_len != raw.size())
        throw std::runtime_error("bad PNG data");
    std::vector<uint8_t> cur(stride), prev(stride, 0);
    img.rgba.resize(size_t(img.width) * img.height * 4);
    for (uint32_t y = 0; y < img.height; ++y) {
        const uint8_t filter = raw[y * (stride + 1)];
        const uint8_t* line = &raw[y * (stride + 1) + 1];
        for (size_t i = 0; i < stride; ++i) {
            const int a = i >= size_t(channels) ? cur[i - channels] : 0, b = prev[i],
                      c = i >= size_t(channels) ? prev[i - channels] : 0;
            int pred = 0;
            switch (filter) {
                case 0: pred = 0; break;
                case 1: pred = a; break;
                case 2: pred = b; break;
                case 3: pred = (a + b) / 2; break;
                case 4: {
                    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
                    pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
                    break;
                }
                default: throw std::runtime_error("bad PNG filter");
            }
            cur[i] = uint8_t(line[i] + pred);
        }
        for (uint32_t x = 0; x < img.width; ++x)
            for (int k = 0; k < 4; ++k)
                img.rgba[(size_t(y) * img.width + x) * 4 + k] = k < channels ? cur[x * channels + k] : 255;
        prev.swap(cur);
    }
    return img;
}

// Share of pixels that differ from the most common colour (the background), and how many colours there are.
struct Ink {
    double share = 0;
    size_t colours = 0;
};
inline Ink ink(const Image& img) {
    std::map<uint32_t, size_t> count;
    const size_t n = size_t(img.width) * img.height;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = &img.rgba[i * 4];
        ++count[(uint32_t(p[0]) << 16) | (uint32_t(p[1]) << 8) | p[2]];
    }
    size_t background = 0;
    for (const auto& [colour, c] : count) background = std::max(background, c);
    return {n ? 1.0 - double(background) / double(n) : 0, count.size()};
}

// `ftbound serve --port 0` as a child; the URL it prints once listening.
class Server {
public:
    explicit Server(std::vector<std::string> extra = {}) {
        int out[2];
        if (pipe(out) != 0) throw std::runtime_error("pipe failed");
        out_fd_ = high_fd(out[0]);
        const int child_out = high_fd(out[1]);
        err_path_ = spec_test::scratch_dir() + "/serve-" + std::to_string(getpid()) + "-" + std::to_string(counter()++) + ".err";
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, child_out, 1);
        posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<std::string> args{ftb_test::binary(), "serve", "--port", "0"};
        args.insert(args.end(), extra.begin(), extra.end());
        pid_ = spawn(args, &fa);
        posix_spawn_file_actions_destroy(&fa);
        close(child_out);
        if (pid_ < 0) throw std::runtime_error("could not start ftbound serve");
        std::string line;
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (line.find('\n') == std::string::npos) {
            pollfd p{out_fd_, POLLIN, 0};
            char c[256];
            ssize_t n = 0;
            if (std::chrono::steady_clock::now() > end || poll(&p, 1, 1000) < 0 ||
                ((p.revents & (POLLIN | POLLHUP)) && (n = read(out_fd_, c, sizeof c)) <= 0))
                throw std::runtime_error("ftbound serve did not start: " + spec_test::slurp(err_path_));
            line.append(c, size_t(n));
        }
        const size_t at = line.find("http://");
        if (at == std::string::npos) throw std::runtime_error("unexpected first line: " + line);
        url_ = line.substr(at, line.find(' ', at) - at);
        port_ = std::stoi(url_.substr(url_.rfind(':') + 1));
    }
    ~Server() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(out_fd_);
    }
    const std::string& url() const { return url_; }
    int port() const { return port_; }
    // Sends `signal` and returns the wait status (-1 when it had to be killed after `seconds`).
    int stop(int signal, double seconds = 20) {
        kill(pid_, signal);
        const int status = reap(pid_, seconds);
        pid_ = -1;
        return status;
    }
    std::string stderr_text() const { return spec_test::slurp(err_path_); }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    pid_t pid_ = -1;
    int out_fd_ = -1, port_ = 0;
    std::string url_, err_path_;
};

}  // namespace browser_test
