; Elixir: defmodule, defprotocol (protocol), defimpl (instance of a protocol), def/defp/
; defmacro/defguard/defdelegate (all clauses of a name are separate entities); local and
; remote calls (keywords, definitions and module attributes left out); alias/import/
; require/use.
(call target: (identifier) @_kw (#eq? @_kw "defmodule")
  (arguments . (alias) @name)) @def.class.module
(call target: (identifier) @_kw (#eq? @_kw "defprotocol")
  (arguments . (alias) @name)) @def.class.protocol
(call target: (identifier) @_kw (#eq? @_kw "defimpl")
  (arguments . (alias) @name)) @def.class.instance
(call target: (identifier) @_kw
  (#any-of? @_kw "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp")
  (arguments . [
    (call target: (identifier) @name)
    (identifier) @name
    (binary_operator left: (call target: (identifier) @name) operator: "when")
  ])) @def.function

((call target: (identifier) @call.name) @call
  (#not-any-of? @call.name
    "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp"
    "defmodule" "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable"
    "alias" "import" "require" "use" "if" "unless" "case" "cond" "with" "for" "fn" "try"
    "receive" "raise" "reraise" "throw" "quote" "unquote" "super"
    "doc" "moduledoc" "typedoc" "spec" "type" "typep" "opaque" "callback" "impl" "behaviour"
    "derive" "enforce_keys"))
(call target: (dot left: (_) @call.receiver right: (identifier) @call.name) (arguments)) @call

(call target: (identifier) @_kw (#any-of? @_kw "alias" "import" "require" "use")
  (arguments . (alias) @import.module)) @import
