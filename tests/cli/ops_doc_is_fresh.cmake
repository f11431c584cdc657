# Fails when docs/ops.md is not what `tracegraph ops --markdown` prints now
# (scripts/make_ops_doc.sh writes it). -DCLI=... -DDOC=...
execute_process(COMMAND ${CLI} ops --markdown OUTPUT_VARIABLE now RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tracegraph ops --markdown failed (${rc})")
endif()
file(READ ${DOC} written)
if(NOT now STREQUAL written)
  message(FATAL_ERROR "${DOC} is stale: run scripts/make_ops_doc.sh")
endif()
message(STATUS "${DOC} is fresh")
