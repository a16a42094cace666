; JavaScript only: `class A extends B`.
(class_heritage [(identifier) @inherits (member_expression property: (property_identifier) @inherits)])
