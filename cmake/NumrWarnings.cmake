# numr_warnings(target): the warning set every numr target builds with.
function(numr_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local
                                           -Wno-psabi $<$<BOOL:${NUMR_WERROR}>:-Werror>)
endfunction()
