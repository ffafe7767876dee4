from django.contrib import admin

from .models import Asset, Benchmark, ContextChange, Item, Release, Scene, SceneObject, WorldFrame


class SceneObjectInline(admin.TabularInline):
    model = SceneObject
    extra = 0


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "family", "created_at"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Scene)
class SceneAdmin(admin.ModelAdmin):
    list_display = ["external_id", "benchmark", "created_at"]
    list_filter = ["benchmark"]
    search_fields = ["external_id", "caption"]
    inlines = [SceneObjectInline]


admin.site.register(Asset, list_display=["file", "role", "scene", "size", "sha256"], list_filter=["role"])

admin.site.register(WorldFrame, list_display=["text", "scene", "side"])

admin.site.register(
    ContextChange, list_display=["id", "scene", "change_type", "status", "author", "version", "updated_at"],
    list_filter=["status", "change_type"],
    search_fields=["raw_text", "refined_text"],
    readonly_fields=["raw_text", "version"],
)

admin.site.register(
    Item, list_display=["id", "question", "answer_format", "status", "benchmark"],
    list_filter=["status", "answer_format", "benchmark"],
    search_fields=["question", "external_id"],
)

admin.site.register(
    Release, list_display=["benchmark", "version", "created_by", "created_at"],
    readonly_fields=["items_file", "manifest_file"],
)
