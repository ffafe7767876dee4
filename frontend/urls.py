from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("crowd/campaigns/<int:campaign_id>/", views.crowd_enter_campaign, name="crowd_campaign"),
    path("annotate/<int:assignment_id>/", views.annotate, name="annotate"),
    path("annotate/<int:assignment_id>/done/", views.annotate_done, name="annotate_done"),
    path("review/", views.review_queue, name="review_queue"),
    path("review/changes/<int:change_id>/", views.review_change, name="review_change"),
    path("manage/<slug:slug>/", views.manage, name="manage"),
    path("manage/<slug:slug>/studies/", views.create_study, name="create_study"),
    path("manage/<slug:slug>/runs/", views.launch_run, name="launch_run"),
    path("manage/<slug:slug>/releases/", views.export_release, name="export_release"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("results/<slug:slug>/", views.results, name="results"),
    path("crowd/studies/<int:study_id>/", views.crowd_enter_study, name="crowd_study"),
    path("eval/sessions/<int:session_id>/", views.eval_session, name="eval_session"),
]
