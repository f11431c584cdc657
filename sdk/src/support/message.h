// Quoting text a file supplied (a name, a line of code, a node's target) in
// an error message: cut to a few hundred characters, so a hostile 50 MB
// string makes a short message, not a 50 MB one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tracegraph::detail {

// The characters a quote keeps by default.
inline constexpr std::size_t kMaxQuoted = 200;

// `text` itself when it has at most `max` characters; else its start and end
// with "...(N bytes)..." between them, `max` characters of it in all.
std::string cut_for_message(std::string_view text, std::size_t max = kMaxQuoted);

}  // namespace tracegraph::detail
