from django.urls import path

from .consumers import CampaignProgressConsumer

websocket_urlpatterns = [path("ws/campaigns/<int:campaign_id>/", CampaignProgressConsumer.as_asgi())]
