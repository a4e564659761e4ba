# shellcheck shell=bash
# whole_run_tests: the ctest regular expression of the tests of whole simulated runs
# (whole-run-tests.regex beside this file: one alternative a line, # comments).
whole_run_tests() {
  grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/whole-run-tests.regex" | grep -v '^$' | paste -sd'|'
}
