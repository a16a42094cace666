; Scala: classes (case classes too), objects, traits, enums, functions (methods by context),
; type definitions, givens; calls, imports (path segments joined), extends/with.
(class_definition name: (identifier) @name) @def.class
(object_definition name: (identifier) @name) @def.class.object
(trait_definition name: (identifier) @name) @def.class.trait
(enum_definition name: (identifier) @name) @def.class.enum
(function_definition name: (identifier) @name) @def.function
(function_declaration name: (identifier) @name) @def.function
(type_definition name: (type_identifier) @name) @def.class.type
(given_definition name: (identifier) @name) @def.class.instance

(extends_clause type: [(type_identifier) @inherits (generic_type type: (type_identifier) @inherits)])

(call_expression
  function: [
    (identifier) @call.name
    (field_expression value: (_) @call.receiver field: (identifier) @call.name)
    (generic_function function: (identifier) @call.name)
  ]) @call
(instance_expression . (type_identifier) @call.name) @call

(import_declaration (identifier) @import.module) @import
(import_declaration (namespace_selectors [(identifier) @import.name
  (arrow_renamed_identifier name: (identifier) @import.name)]))
