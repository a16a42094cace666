; Shell (bash, sh, bats): functions; commands as calls (builtins and common utilities left
; out); `source FILE` and `. FILE` as imports.
(function_definition name: (word) @name) @def.function

((command name: (command_name (word) @call.name)) @call
  (#not-any-of? @call.name
    "echo" "printf" "read" "local" "export" "declare" "typeset" "readonly" "return" "exit"
    "shift" "set" "unset" "cd" "test" "[" "[[" "true" "false" "eval" "exec" "source" "."
    "trap" "wait" "command" "builtin" "type" "let" "getopts" "mkdir" "rm" "cp" "mv"
    "cat" "grep" "sed" "awk" "cut" "tr" "sort" "head" "tail" "ls" "dirname" "basename"))

((command name: (command_name (word) @_source) . argument: (_) @import.module) @import
  (#any-of? @_source "source" "."))
