"""Static files with content hashes in their names: WhiteNoise's compressed manifest storage, which
collectstatic fills (the Docker image does, Dockerfile), so a CDN and browsers may cache each file for a
year (WhiteNoise sends `immutable` for hashed names). Not strict: a name missing from the manifest (no
collectstatic run, or a file added since) is served under its plain name instead of failing the page."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestStaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name):
        try:
            return super().stored_name(name)
        except ValueError:  # not in the manifest and not in STATIC_ROOT: WhiteNoise's finders serve it as named
            return name
