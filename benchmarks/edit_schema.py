"""The JSON shape of `ContextChange.edit` as the API documents it, and the field that carries it. The
service checks the shape itself (annotation/change_geometry.parse_edit) and names the field at fault, so
the field only says "a JSON object" to DRF and the schema below to drf-spectacular."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

EDIT_HELP = ("The change as geometry (schema in annotation/change_geometry.py): {objects: [{instance_id, "
             "translation [dx, dy, dz], rotation (rad about z), scale (number or [sx, sy, sz]), removed}], added: "
             "[{label, center, size, yaw}], frame: aligned | world}; checked against the text (400 on `edit`).")

_VECTOR = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}
EDIT_SCHEMA = {
    "type": "object", "nullable": True, "additionalProperties": False,
    "description": "Aligned coordinates (metres, z up) unless frame is 'world' ([right, front, up] from the room's "
                   "centre, yaw from world right). The stored edit adds `world`, its world-frame form.",
    "properties": {
        "frame": {"type": "string", "enum": ["aligned", "world"]},
        "objects": {"type": "array", "maxItems": 20, "items": {
            "type": "object", "required": ["instance_id"], "additionalProperties": False,
            "properties": {"instance_id": {"type": "integer"}, "translation": _VECTOR, "rotation": {"type": "number"},
                           "scale": {"oneOf": [{"type": "number"}, _VECTOR]}, "removed": {"type": "boolean"}}}},
        "added": {"type": "array", "maxItems": 5, "items": {
            "type": "object", "required": ["label", "center", "size"], "additionalProperties": False,
            "properties": {"label": {"type": "string"}, "center": _VECTOR, "size": _VECTOR, "yaw": {"type": "number"}}}},
    },
}


@extend_schema_field(EDIT_SCHEMA)
class EditField(serializers.JSONField):
    """An edit travels as a JSON object; its shape is checked by the service, which names the field at fault."""
