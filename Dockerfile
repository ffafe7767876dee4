FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm ffmpeg libosmesa6 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt package.json package-lock.json ./
RUN pip install --no-cache-dir -r requirements.txt && npm ci --omit=dev
COPY . .
# collectstatic signs nothing: a throwaway key, so no key is made into the image (var/ is not copied either)
RUN bash scripts/install_static.sh && STATIC_MANIFEST=1 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "config.asgi:application"]
