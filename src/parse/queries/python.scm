; Python: classes, functions (methods by context), calls, imports, base classes.
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function

(class_definition
  superclasses: (argument_list
    [(identifier) @inherits
     (attribute attribute: (identifier) @inherits)]))

(call
  function: [
    (identifier) @call.name
    (attribute object: (_) @call.receiver attribute: (identifier) @call.name)
  ]) @call

(import_statement name: (dotted_name) @import.module) @import
(import_statement name: (aliased_import name: (dotted_name) @import.module)) @import
(import_from_statement module_name: (_) @import.module) @import
(import_from_statement name: (dotted_name) @import.name)
(import_from_statement name: (aliased_import name: (dotted_name) @import.name))
