# Included by tests/CMakeLists.txt in every build: the fuzz harnesses as small libraries
# (alap_fuzz_<group>) and a GoogleTest program that replays every saved crash input
# (regressions/<target>/) and every seed (corpus/<target>/) through them. The libFuzzer executables
# are in CMakeLists.txt here, added only with ALAP_FUZZ=ON. Rooms without a library are left out.
set(ALAP_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

# alap_fuzz_harness(<group> <core library> <sources...>)
function(alap_fuzz_harness group lib)
  add_library(alap_fuzz_${group} STATIC ${ARGN})
  target_include_directories(alap_fuzz_${group} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(alap_fuzz_${group} PUBLIC ${lib} PRIVATE alap_warnings)
endfunction()

set(harness_libs)
set(harness_defs)
if(TARGET alap_core_gguf)
  alap_fuzz_harness(gguf alap_core_gguf ${ALAP_FUZZ_DIR}/targets/gguf_reader.cpp)
  list(APPEND harness_libs alap_fuzz_gguf)
  list(APPEND harness_defs ALAP_FUZZ_HAVE_GGUF=1)
endif()
if(TARGET alap_core_store)
  alap_fuzz_harness(store alap_core_store ${ALAP_FUZZ_DIR}/targets/store_json_import.cpp)
  list(APPEND harness_libs alap_fuzz_store)
  list(APPEND harness_defs ALAP_FUZZ_HAVE_STORE=1)
endif()
if(TARGET alap_core_text)
  alap_fuzz_harness(text alap_core_text ${ALAP_FUZZ_DIR}/targets/tokenizers.cpp ${ALAP_FUZZ_DIR}/targets/chat_template.cpp)
  list(APPEND harness_libs alap_fuzz_text)
  list(APPEND harness_defs ALAP_FUZZ_HAVE_TEXT=1)
endif()
if(TARGET alap_core_engine)
  alap_fuzz_harness(engine alap_core_engine ${ALAP_FUZZ_DIR}/targets/engine_load.cpp)
  list(APPEND harness_libs alap_fuzz_engine)
  list(APPEND harness_defs ALAP_FUZZ_HAVE_ENGINE=1)
endif()
# The Hugging Face answer parsers live in the app's download engine (Qt Core + Network); their
# two sources are compiled here directly so the harness does not need the whole download library.
set(hf_sources ${PROJECT_SOURCE_DIR}/app/src/download/hf_api.cpp ${PROJECT_SOURCE_DIR}/app/src/download/download_types.cpp)
if(EXISTS ${PROJECT_SOURCE_DIR}/app/src/download/hf_api.cpp AND EXISTS ${PROJECT_SOURCE_DIR}/app/src/download/download_types.cpp)
  find_package(Qt6 6.4 QUIET COMPONENTS Core Network)
  if(Qt6Core_FOUND AND Qt6Network_FOUND)
    alap_fuzz_harness(hf "Qt6::Core;Qt6::Network" ${ALAP_FUZZ_DIR}/targets/hf_api.cpp ${hf_sources})
    target_include_directories(alap_fuzz_hf PRIVATE ${PROJECT_SOURCE_DIR}/app/src)
    list(APPEND harness_libs alap_fuzz_hf)
    list(APPEND harness_defs ALAP_FUZZ_HAVE_HF=1)
  endif()
endif()

if(harness_libs)
  alap_add_gtest(hostile_input_regressions_test
    SOURCES ${ALAP_FUZZ_DIR}/regressions_test.cpp
    LIBS ${harness_libs}
    LABELS "regressions;gguf;text;store")
  target_compile_definitions(hostile_input_regressions_test PRIVATE ALAP_FUZZ_DIR="${ALAP_FUZZ_DIR}" ${harness_defs})
endif()
