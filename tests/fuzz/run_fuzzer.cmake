# Runs one fuzzer for SECONDS over a fresh copy of its seed corpus (the short CI run):
#   cmake -DFUZZER=exe -DCORPUS=dir -DREGRESSIONS=dir -DWORK=dir -DSECONDS=20 -P run_fuzzer.cmake
# Fails when the fuzzer finds a crash, a leak, a timeout or runs out of memory; the input that did
# it is left in WORK/artifacts/.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
file(GLOB seeds ${CORPUS}/*)
if(seeds)
  file(COPY ${seeds} DESTINATION ${WORK}/corpus)
endif()
set(dirs ${WORK}/corpus)
if(IS_DIRECTORY ${REGRESSIONS})
  list(APPEND dirs ${REGRESSIONS})
endif()
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
          -artifact_prefix=${WORK}/artifacts/ ${dirs}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${rc}); the input is in ${WORK}/artifacts/")
endif()
