from django.contrib.auth import views as auth_views
from django.urls import path

from .pages import annotation, common, humaneval, manage, review

urlpatterns = [
    path("", common.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # annotators
    path("crowd/campaigns/<int:campaign_id>/", annotation.crowd_enter_campaign, name="crowd_campaign"),
    path("annotate/<int:assignment_id>/", annotation.annotate, name="annotate"),
    path("annotate/<int:assignment_id>/done/", annotation.annotate_done, name="annotate_done"),
    # reviewers
    path("review/", review.review_queue, name="review_queue"),
    path("review/changes/<int:change_id>/", review.review_change, name="review_change"),
    # admins
    path("manage/<slug:slug>/", manage.manage, name="manage"),
    path("manage/<slug:slug>/studies/", manage.create_study, name="create_study"),
    path("manage/<slug:slug>/runs/", manage.launch_run, name="launch_run"),
    path("manage/<slug:slug>/releases/", manage.export_release, name="export_release"),
    path("runs/<int:run_id>/", manage.run_detail, name="run_detail"),
    path("results/<slug:slug>/", manage.results, name="results"),
    # evaluators
    path("crowd/studies/<int:study_id>/", humaneval.crowd_enter_study, name="crowd_study"),
    path("eval/sessions/<int:session_id>/", humaneval.eval_session, name="eval_session"),
]
