from django.urls import path

from .consumers import RunProgressConsumer

websocket_urlpatterns = [path("ws/runs/<int:run_id>/", RunProgressConsumer.as_asgi())]
