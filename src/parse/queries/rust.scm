; Rust: ADTs, traits, type aliases, functions, impl methods, calls, use, impl Trait for Type.
(struct_item name: (type_identifier) @name) @def.class.struct
(enum_item name: (type_identifier) @name) @def.class.enum
(union_item name: (type_identifier) @name) @def.class.union
(trait_item name: (type_identifier) @name) @def.class.trait
(type_item name: (type_identifier) @name) @def.class.type
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(impl_item
  type: (_) @qualifier
  body: (declaration_list (function_item name: (identifier) @name) @def.method))
(mod_item name: (identifier) @name body: (declaration_list)) @scope

; Tests written beside the code: a module or function under `#[cfg(test)]`, a function under
; `#[test]` or an attribute whose path ends in `test` (`#[tokio::test]`), among the attributes
; right above it.
((attribute_item (attribute (identifier) @_cfg arguments: (token_tree . (identifier) @_test .)))
  .
  (attribute_item)*
  .
  (mod_item name: (identifier) @name body: (declaration_list)) @scope.test
  (#eq? @_cfg "cfg")
  (#eq? @_test "test"))
((attribute_item (attribute (identifier) @_cfg arguments: (token_tree . (identifier) @_test .)))
  .
  (attribute_item)*
  .
  (function_item name: (identifier) @name) @def.function.test
  (#eq? @_cfg "cfg")
  (#eq? @_test "test"))
((attribute_item (attribute [(identifier) (scoped_identifier name: (identifier))] @_path))
  .
  (attribute_item)*
  .
  (function_item name: (identifier) @name) @def.function.test
  (#match? @_path "(^|::)test$"))

(impl_item trait: (_) @implements type: (_) @implementor)
(impl_item body: (declaration_list)) @container
(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier)] @inherits))

(call_expression
  function: [
    (identifier) @call.name
    (field_expression value: (_) @call.receiver field: (field_identifier) @call.name)
    (scoped_identifier path: (_) @call.receiver name: (identifier) @call.name)
    (generic_function function: (identifier) @call.name)
  ]) @call

(use_declaration argument: (_) @import.module) @import
