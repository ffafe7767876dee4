"""The Benchmark admin with a scan import (services.import_scan) added: the admin page is benchmarks',
the import this app's, so this app registers the Benchmark admin again as benchmarks' plus the import."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from benchmarks.admin import BenchmarkAdmin
from benchmarks.models import Benchmark
from core.errors import DomainError

from .services import MaterialError, NamedFile, import_scan


class ScanImportForm(forms.Form):
    scene_id = forms.CharField(max_length=100, help_text="Id in the source dataset, e.g. scene0000_00.")
    ply = forms.FileField(label="PLY", help_text="Point cloud or mesh with vertex colours (binary or ASCII).")
    aggregation = forms.FileField(required=False, help_text="ScanNet *.aggregation.json (with the segments file).")
    segments = forms.FileField(required=False, help_text="ScanNet *_vh_clean_2.0.010000.segs.json.")
    boxes = forms.FileField(required=False, help_text="Or: a JSON list of {label, center, size[, yaw]} boxes.")
    meta = forms.FileField(required=False, label="Scene .txt",
                           help_text="ScanNet sceneXXXX_YY.txt: its axisAlignment is applied. Without it the "
                                     "alignment (floor on XY, walls on the axes) is estimated from the scan.")
    no_align = forms.BooleanField(required=False, label="Keep the scan's own frame (no alignment)")
    caption = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    world_frame = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                                  help_text="e.g. The desk was located at the left of the scene.")


admin.site.unregister(Benchmark)


@admin.register(Benchmark)
class BenchmarkWithScanImportAdmin(BenchmarkAdmin):
    readonly_fields = ["import_scan_link"]

    @admin.display(description="3D scans")
    def import_scan_link(self, benchmark):
        if not benchmark.pk:
            return "Save the benchmark first."
        return format_html('<a href="{}">Import a scan…</a>', reverse("admin:benchmarks_benchmark_import_scan",
                                                                        args=[benchmark.pk]))

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_scan_view)
        return [path("<int:pk>/import-scan/", view, name="benchmarks_benchmark_import_scan"), *super().get_urls()]

    def import_scan_view(self, request, pk):
        """Upload a scan (services.import_scan); every problem is shown on the form, nothing half-written."""
        benchmark = get_object_or_404(Benchmark, pk=pk)
        if not self.has_change_permission(request, benchmark):
            raise PermissionDenied
        form = ScanImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data

            def named(key):
                upload = data.get(key)
                return NamedFile(upload.name, upload.read()) if upload else None

            try:
                scene = import_scan(benchmark, data["scene_id"], named("ply"), aggregation=named("aggregation"),
                                    segments=named("segments"), boxes=named("boxes"), meta=named("meta"),
                                    align=not data["no_align"], caption=data["caption"],
                                    world_frame=data["world_frame"])
            except MaterialError as exc:
                for error in exc.errors:
                    form.add_error(None, error)
            except DomainError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                self.message_user(request, f"Imported {scene.external_id} with {scene.scene_objects.count()} "
                                           "objects; the viewer files are being made.", messages.SUCCESS)
                return redirect("admin:benchmarks_scene_change", scene.pk)
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "benchmark": benchmark,
                   "form": form, "title": f"Import a scan into {benchmark}"}
        return TemplateResponse(request, "admin/benchmarks/benchmark/import_scan.html", context)


