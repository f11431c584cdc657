#include "support/message.h"

namespace tracegraph::detail {

std::string cut_for_message(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  const std::size_t head = max * 3 / 4, tail = max - head;
  return std::string(text.substr(0, head)) + "...(" + std::to_string(text.size()) + " bytes)..." + std::string(text.substr(text.size() - tail));
}

}  // namespace tracegraph::detail
