// Helpers shared by the GoogleTest suites.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tracegraph/error.h"

// Runs `statement`, expecting a tracegraph::Error with `expected_code` whose
// message contains `substring`.
#define EXPECT_TG_ERROR(statement, expected_code, substring)                                     \
  do {                                                                                           \
    try {                                                                                        \
      statement;                                                                                 \
      ADD_FAILURE() << "expected " << tracegraph::error_code_name(expected_code) << ", no error"; \
    } catch (const tracegraph::Error& e) {                                                       \
      EXPECT_EQ(tracegraph::error_code_name(e.code()), tracegraph::error_code_name(expected_code)) \
          << e.what();                                                                           \
      EXPECT_NE(std::string(e.message()).find(substring), std::string::npos)                    \
          << "message: " << e.message() << "\nexpected to contain: " << (substring);             \
    }                                                                                            \
  } while (0)

inline std::string test_data(const std::string& relative) { return std::string(TRACEGRAPH_TEST_DATA_DIR) + "/" + relative; }
