"""Built-in rules, one module per rule family. Registered through the ``dslint.rules`` entry points."""
