from django.contrib.auth import views as auth_views
from django.urls import path

from .pages import annotation, campaigns, common, home, humaneval, manage, releases, review, scenes

urlpatterns = [
    path("", home.home, name="home"),
    path("favicon.ico", common.favicon, name="favicon"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # annotators
    path("crowd/campaigns/<int:campaign_id>/", annotation.crowd_enter_campaign, name="crowd_campaign"),
    path("annotate/<int:assignment_id>/", annotation.annotate, name="annotate"),
    path("annotate/<int:assignment_id>/done/", annotation.annotate_done, name="annotate_done"),
    path("annotate/<int:assignment_id>/returned/", annotation.annotate_returned, name="annotate_returned"),
    path("crowd/campaigns/<int:campaign_id>/next/", annotation.next_assignment, name="campaign_next"),
    path("crowd/campaigns/<int:campaign_id>/quiz/", annotation.campaign_quiz, name="campaign_quiz"),
    path("campaigns/<int:campaign_id>/dashboard/", annotation.campaign_dashboard, name="campaign_dashboard"),
    path("campaigns/<int:campaign_id>/settings/", campaigns.campaign_edit, name="campaign_edit"),
    path("manage/<slug:slug>/campaigns/new/", campaigns.campaign_new, name="campaign_new"),
    # reviewers
    path("review/", review.review_queue, name="review_queue"),
    path("review/changes/<int:change_id>/", review.review_change, name="review_change"),
    path("review/items/<int:item_id>/", review.review_item, name="review_item"),
    path("review/items/<int:item_id>/complement/", review.review_item_complement, name="review_item_complement"),
    path("review/filtering/", review.filter_questions, name="review_filtering"),
    path("review/duplicates/<int:run_id>/", review.duplicates, name="review_duplicates"),
    path("review/agreement/<slug:slug>/", review.agreement, name="review_agreement"),
    path("review/duplicates/start/<slug:slug>/", review.start_dedup, name="start_dedup"),
    path("review/polish/start/", review.start_polish, name="start_polish"),
    # admins
    path("manage/<slug:slug>/", manage.manage, name="manage"),
    path("manage/<slug:slug>/studies/", manage.create_study, name="create_study"),
    path("manage/<slug:slug>/runs/", manage.launch_run, name="launch_run"),
    path("manage/<slug:slug>/recipes/", manage.launch_recipe, name="launch_recipe"),
    path("manage/<slug:slug>/releases/", manage.export_release, name="export_release"),
    path("runs/<int:run_id>/", manage.run_detail, name="run_detail"),
    path("runs/<int:run_id>/predictions/", manage.run_predictions, name="run_predictions"),
    path("runs/<int:run_id>/predictions.csv", manage.run_predictions_csv, name="run_predictions_csv"),
    path("benchmarks/<slug:slug>/results/", manage.results, name="benchmark_results"),
    path("results/<slug:slug>/", manage.results, name="results"),
    path("manage/scenes/<int:scene_id>/", scenes.scene_media, name="scene_media"),
    path("scenes/<int:scene_id>/", scenes.scene_page, name="scene_page"),
    # releases
    path("releases/<int:release_id>/", releases.release_detail, name="release_detail"),
    # evaluators
    path("crowd/studies/<int:study_id>/", humaneval.crowd_enter_study, name="crowd_study"),
    path("eval/sessions/<int:session_id>/", humaneval.eval_session, name="eval_session"),
    path("eval/sessions/<int:session_id>/consent/", humaneval.eval_consent, name="eval_consent"),
    path("eval/studies/<int:study_id>/start/", humaneval.start_invited, name="study_start"),
    path("manage/<slug:slug>/studies/design/", humaneval.study_design, name="study_design"),
    path("studies/<int:study_id>/results/", humaneval.study_results, name="study_results"),
    path("studies/<int:study_id>/settings/", humaneval.study_settings, name="study_settings"),
    path("studies/<int:study_id>/invitations/", humaneval.study_invitations, name="study_invitations"),
    path("studies/<int:study_id>/places/check/", humaneval.study_check_places, name="study_check_places"),
    path("studies/<int:study_id>/results.csv", humaneval.study_results_csv, name="study_results_csv"),
]
