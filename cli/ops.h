// `tracegraph ops`: every op the op table knows or a backend runs, its
// canonical name, and what runs it on each backend. docs/ops.md is this, as
// markdown (scripts/make_ops_doc.sh; a test fails when it is stale).
#pragma once

namespace tracegraph::cli {

int list_ops(bool markdown);

}  // namespace tracegraph::cli
