; Go: funcs, methods (qualified by receiver type), type specs, calls, imports, embedding.
(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @qualifier
        (pointer_type (type_identifier) @qualifier)
        (generic_type type: (type_identifier) @qualifier)
        (pointer_type (generic_type type: (type_identifier) @qualifier))
      ]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.class.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.class.interface
(type_spec name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type)
         (pointer_type) (generic_type) (channel_type) (array_type)]) @def.class.type
(type_alias name: (type_identifier) @name) @def.class.type

(struct_type (field_declaration_list (field_declaration . type: [(type_identifier) (qualified_type)] @inherits .)))

(call_expression
  function: [
    (identifier) @call.name
    (selector_expression operand: (_) @call.receiver field: (field_identifier) @call.name)
  ]) @call

(import_spec name: (package_identifier)? @import.name path: (_) @import.module) @import
