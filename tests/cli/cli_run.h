// Running the tracegraph command-line tool (TRACEGRAPH_CLI) as a user runs it.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

namespace tracegraph::testing {

struct CliRun {
  int status;
  std::string out;  // stdout and stderr together
};

// `environment`: NAME=VALUE assignments for the command, or empty.
inline CliRun run_cli(const std::string& args, const std::string& environment = "") {
  const std::string cmd = (environment.empty() ? "" : "env " + environment + " ") + std::string(TRACEGRAPH_CLI) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  const int status = pclose(pipe.release());
  return {WEXITSTATUS(status), out};
}

}  // namespace tracegraph::testing
