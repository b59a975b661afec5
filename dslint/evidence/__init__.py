"""What the repository says about the launch: pins, versions, argument names, model shapes, the keys its code reads."""
