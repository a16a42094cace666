; Ruby: classes, modules, methods (kind by context), calls, require, superclass.
(class name: (_) @name) @def.class
(module name: (_) @name) @def.class.module
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.function

(superclass [(constant) @inherits (scope_resolution name: (constant) @inherits)])

(call receiver: (_)? @call.receiver method: (identifier) @call.name) @call

(call
  method: (identifier) @_require (#match? @_require "^require(_relative)?$")
  arguments: (argument_list (string (string_content) @import.module))) @import
