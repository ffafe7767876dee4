"""Item generators: questions made from scene metadata in a family's published shape.

`spatial457` (CLEVR functional programs with Spatial457's 3D Relate and Relate Collision) and
`m3verse` (before/after template questions) are pure Python: no Django import, so the
`generate_items` command, tests and scripts can use them alike."""
